package main

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"
	"time"
)

// connLimitListener caps the open connections of a listener at max. At the
// cap, a new connection takes the slot of one waiting without a request in
// progress (an idle keep-alive connection, or one that has not sent its
// request header yet; evictableLocked says which), and that one is closed.
// Only when every connection is busy with a request does Accept wait for one
// to close. A flood of idle or silent connections therefore neither grows
// memory past the cap nor locks out a new caller, which
// netutil.LimitListener (it only waits) would do.
//
// Its ConnState method must be the http.Server's ConnState hook: that is how
// it learns which connections are busy.
type connLimitListener struct {
	net.Listener
	max     int
	metrics *metrics // may be nil

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
// and then, over the cap, closes the connection that has waited longest.
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
	lc := &limitedConn{Conn: c, owner: l}
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
// every other connection became busy meanwhile, it waits (the new client's
// request waits unread) until one closes or goes idle.
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
		case <-l.closed:
			return nil, net.ErrClosed
		}
	}
}

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
		l.signal() // a full Accept may now evict it
	}
}

// evictableLocked picks the connection to evict: one that has sent no
// request yet, else the idle one that has served the fewest requests (a
// client's pooled connection, such as Metacontroller's, serves many; a
// flood's one each), the one waiting longest among equals.
func (l *connLimitListener) evictableLocked() *limitedConn {
	var victim *limitedConn
	var since time.Time
	for c, t := range l.waiting {
		if victim == nil || c.requests < victim.requests || (c.requests == victim.requests && t.Before(since)) {
			victim, since = c, t
		}
	}
	if victim != nil {
		delete(l.waiting, victim) // evicted once, even if Close is slow
	}
	return victim
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

// limitedConn gives its slot back when closed, once.
type limitedConn struct {
	net.Conn
	owner    *connLimitListener
	once     sync.Once
	gone     bool // guarded by owner.mu
	fresh    bool // no request has reached the handler yet; guarded by owner.mu
	requests int  // requests read on it; guarded by owner.mu
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.owner.release(c) })
	return err
}
