package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// connLimitListener caps the open connections of a listener at max. At the
// cap, a new connection takes the slot of one that is evictable, and that
// one is closed. Closing it loses nothing and resets nothing: an evictable
// connection has no request in progress and holds no unread byte, so it
// ends with a FIN. In the order evictableLocked picks them:
//
//  1. a connection accepted more than silentGrace ago that has sent nothing
//     (over TLS: nothing for silentGrace, since the server cannot tell
//     handshake bytes from a request's), oldest first;
//  2. an idle keep-alive connection (between requests) that has sent nothing
//     since its last answer and has not passed authentication: the one that
//     served the fewest requests (a flood's connections serve one each),
//     the one idle longest among equals;
//  3. an idle connection that passed authentication (Metacontroller's pool,
//     authenticator.protect; a scraper with a metrics token, requireToken:
//     both call trust), idle longest first, and only
//     when no connection is busy or about to be (none would free a slot).
//
// Never evicted: a connection with a request in progress, one whose bytes
// the kernel holds unread (unreadBytes: FIONREAD, Linux only) or the server
// has read since it was accepted or went idle (a request header on its
// way), one accepted less than silentGrace ago (its request may be on the
// wire). Those are freed by their deadlines (the header within
// readHeaderTimeout, the request within --request-timeout) and, without
// credentials, by the fast refusal (authenticator.protect), which closes a
// refused connection within refusalLinger.
//
// When none is evictable, the new connection waits, accepted but unread,
// until a slot frees or a connection becomes evictable (makeRoom looks
// again every holdPoll), and the connections behind it wait in the
// kernel's listen backlog; once that is full the kernel drops their SYNs
// (tcp_abort_on_overflow 0, Linux's default) and their clients retry the
// handshake. None of them is reset.
//
// A flood of idle or silent connections therefore neither grows memory past
// the cap nor locks out a new caller, which netutil.LimitListener (it only
// waits) would do. Not covered: a request pipelined behind another (sent
// before its answer) sits in the server's buffer, not the kernel's, and its
// idle connection may be evicted; Metacontroller does not pipeline.
//
// Its ConnState method must be the http.Server's ConnState hook: that is how
// it learns which connections are busy.
type connLimitListener struct {
	net.Listener
	max     int
	metrics *metrics // may be nil
	// tls: TLS runs on the accepted connections (listeners.withTLS), so
	// what a connection with no request yet has read may be its handshake
	// (quiet).
	tls bool

	mu      sync.Mutex
	open    int                        // accepted and not yet closed, plus reserved slots
	fresh   int                        // accepted, no request in the handler yet
	waiting map[*limitedConn]time.Time // connections with no request in progress, since when
	freed   chan struct{}              // a slot may have become free
	closed  chan struct{}
	once    sync.Once
}

func newConnLimitListener(l net.Listener, max int, m *metrics) *connLimitListener {
	return &connLimitListener{
		Listener: l,
		max:      max,
		metrics:  m,
		waiting:  map[*limitedConn]time.Time{},
		freed:    make(chan struct{}, 1),
		closed:   make(chan struct{}),
	}
}

// Accept waits until there is a free slot or a connection to evict, accepts,
// and then, over the cap, closes the evictable connection evictableLocked
// picks.
// Evicting only once a new connection is in hand keeps idle connections
// alive until someone actually needs their slot.
func (l *connLimitListener) Accept() (net.Conn, error) {
	for {
		l.mu.Lock()
		if l.open < l.max || len(l.waiting) > 0 {
			l.open++ // reserve a slot, or one to take over
			l.mu.Unlock()
			break
		}
		l.mu.Unlock()
		select {
		case <-l.freed:
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		l.release(nil)
		return nil, err
	}
	lc := &limitedConn{Conn: c, owner: l, accepted: time.Now()}
	victim, err := l.makeRoom()
	if err != nil {
		_ = c.Close()
		l.release(nil)
		return nil, err
	}
	l.mu.Lock()
	l.waiting[lc] = time.Now()
	l.fresh++
	lc.fresh = true
	l.mu.Unlock()
	if l.metrics != nil {
		l.metrics.connections.Inc()
	}
	if victim != nil {
		if l.metrics != nil {
			l.metrics.evicted.Inc()
		}
		_ = victim.Close()
	}
	return lc, nil
}

// makeRoom, over the cap, picks the connection to evict for a new one. If
// none is evictable, it waits (the new client's request waits unread) until
// one closes or goes idle, looking again every holdPoll: a connection's
// unread bytes are read without a signal.
func (l *connLimitListener) makeRoom() (*limitedConn, error) {
	for {
		l.mu.Lock()
		if l.open <= l.max {
			l.mu.Unlock()
			return nil, nil
		}
		if victim := l.evictableLocked(); victim != nil {
			l.mu.Unlock()
			return victim, nil
		}
		l.mu.Unlock()
		select {
		case <-l.freed:
		case <-time.After(holdPoll):
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
}

// holdPoll is how often a full makeRoom looks again for a connection that
// no longer holds unread bytes or has been silent long enough.
const holdPoll = 20 * time.Millisecond

// silentGrace is how long an accepted connection that has sent nothing is
// kept from eviction: its client connected to send a request, which may
// still be on its way (Metacontroller sends its header at once).
const silentGrace = 250 * time.Millisecond

// serving wraps the server's handler: a request that reaches it marks its
// connection as no longer fresh (see awaitFirstRequests). The server's
// ConnContext must be withConn.
func (l *connLimitListener) serving(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if lc, ok := asLimitedConn(r.Context().Value(connKey{})); ok {
			l.mu.Lock()
			if lc.fresh {
				lc.fresh = false
				l.fresh--
			}
			l.mu.Unlock()
		}
		next.ServeHTTP(w, r)
	})
}

type connKey struct{}

// asLimitedConn finds the *limitedConn under a connection: itself, or the
// one a TLS connection runs on (TLS is wrapped around the capped listener,
// listeners.withTLS).
func asLimitedConn(c any) (*limitedConn, bool) {
	if tlsConn, ok := c.(*tls.Conn); ok {
		c = tlsConn.NetConn()
	}
	lc, ok := c.(*limitedConn)
	return lc, ok
}

// withConn is the http.Server ConnContext that lets serving find a
// request's connection.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// awaitFirstRequests waits, after Close, until every accepted connection has
// had its first request reach the handler (or closed), or ctx is done.
// http.Server drops, with a reset, a connection whose request header it
// finishes reading after Shutdown began, so Shutdown must wait for these.
func (l *connLimitListener) awaitFirstRequests(ctx context.Context) {
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		l.mu.Lock()
		fresh := l.fresh
		l.mu.Unlock()
		if fresh == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Close closes the listener once; later calls (http.Server.Shutdown after
// drain closed it) return nil.
func (l *connLimitListener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.closed)
		err = l.Listener.Close()
	})
	return err
}

// ConnState is the http.Server ConnState hook: a connection is evictable
// while it is new (no request header yet) or idle between requests.
func (l *connLimitListener) ConnState(c net.Conn, state http.ConnState) {
	lc, ok := asLimitedConn(c)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if lc.gone {
		return
	}
	switch state {
	case http.StateActive:
		lc.requests++
		delete(l.waiting, lc)
	case http.StateHijacked:
		delete(l.waiting, lc)
	case http.StateIdle:
		l.waiting[lc] = time.Now()
		lc.heard.Store(false) // what it read was its last request
		l.signal()            // a full Accept may now evict it
	}
}

// evictableLocked picks the connection to evict, in the order of the
// connLimitListener doc comment, and removes it from waiting; nil: none is
// evictable, wait.
func (l *connLimitListener) evictableLocked() *limitedConn {
	now := time.Now()
	var untrusted, trusted []*limitedConn
	for c := range l.waiting {
		if c.trusted.Load() {
			trusted = append(trusted, c)
		} else {
			untrusted = append(untrusted, c)
		}
	}
	slices.SortFunc(untrusted, func(a, b *limitedConn) int {
		return cmp.Or(cmp.Compare(a.requests, b.requests), l.waiting[a].Compare(l.waiting[b]))
	})
	holding := false
	for _, c := range untrusted {
		if !l.quiet(c, now) {
			holding = true
			continue
		}
		delete(l.waiting, c) // evicted once, even if Close is slow
		return c
	}
	// The new connection's slot is reserved in open and it is not in
	// waiting yet: busy are the others with a request in progress.
	if busy := l.open - 1 - len(l.waiting); busy > 0 || holding {
		return nil
	}
	slices.SortFunc(trusted, func(a, b *limitedConn) int { return l.waiting[a].Compare(l.waiting[b]) })
	for _, c := range trusted {
		if l.quiet(c, now) {
			delete(l.waiting, c)
			return c
		}
	}
	return nil
}

// quiet reports whether the waiting connection c may be closed without
// losing or resetting a request: the kernel holds no byte of it unread,
// and it has sent nothing since it went idle (c.requests > 0) or, still
// without a request, since it was accepted silentGrace ago. Over TLS a
// connection with no request yet has read its handshake: it is quiet once
// it has read nothing for silentGrace.
func (l *connLimitListener) quiet(c *limitedConn, now time.Time) bool {
	if unreadBytes(c.Conn) {
		return false
	}
	if c.requests > 0 {
		return !c.heard.Load()
	}
	if now.Sub(c.accepted) < silentGrace {
		return false
	}
	if !c.heard.Load() {
		return true
	}
	return l.tls && now.Sub(time.Unix(0, c.lastRead.Load())) >= silentGrace
}

// trust marks the connection r came on as one that passed authentication
// (authenticator.protect): at the cap it is evicted last (evictableLocked).
func trust(r *http.Request) {
	if lc, ok := asLimitedConn(r.Context().Value(connKey{})); ok && !lc.trusted.Load() {
		lc.trusted.Store(true)
	}
}

// release frees the slot of c (nil: a reserved slot that never got a
// connection).
func (l *connLimitListener) release(c *limitedConn) {
	l.mu.Lock()
	l.open--
	if c != nil {
		c.gone = true
		delete(l.waiting, c)
		if c.fresh {
			c.fresh = false
			l.fresh--
		}
	}
	l.mu.Unlock()
	if c != nil && l.metrics != nil {
		l.metrics.connections.Dec()
	}
	l.signal()
}

// signal wakes a waiting Accept, if any.
func (l *connLimitListener) signal() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// limitedConn gives its slot back when closed, once, and notes whether it
// has read bytes since it last went idle.
type limitedConn struct {
	net.Conn
	owner    *connLimitListener
	once     sync.Once
	gone     bool // guarded by owner.mu
	fresh    bool // no request has reached the handler yet; guarded by owner.mu
	requests int  // requests read on it; guarded by owner.mu
	accepted time.Time
	heard    atomic.Bool  // it read bytes since it was accepted or last went idle
	lastRead atomic.Int64 // when it last read bytes, Unix nanoseconds
	trusted  atomic.Bool  // a request on it passed authentication (trust)
}

func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.lastRead.Store(time.Now().UnixNano())
		if !c.heard.Load() {
			c.heard.Store(true)
		}
	}
	return n, err
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.owner.release(c) })
	return err
}
