package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// keepAliveConn sends one request on a fresh connection, reads the answer
// and keeps the connection open (idle).
func keepAliveConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := bufio.NewReader(conn)
	fmt.Fprint(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return conn, r
}

// TestConnectionCapEvictsIdle: at --max-connections a new caller is served
// at once, and the connection idle longest is the one closed for it.
func TestConnectionCapEvictsIdle(t *testing.T) {
	s := startServer(t, serveConfig{limits: limitConfig{maxConnections: 2}})
	oldest, oldestReader := keepAliveConn(t, s.addr)
	time.Sleep(20 * time.Millisecond)
	newer, newerReader := keepAliveConn(t, s.addr)

	body := readFile(t, "testdata/metacontroller/sync-01-no-children.json")
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Post(s.base+"/hooks/myapp/sync", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("a new caller at the connection cap: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a new caller at the cap = %d, want 200", resp.StatusCode)
	}
	_ = oldest.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := oldestReader.ReadByte(); err == nil {
		t.Error("the longest-idle connection was not closed")
	}
	// The newer one is still served.
	fmt.Fprint(newer, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = newer.SetReadDeadline(time.Now().Add(2 * time.Second))
	if resp, err := http.ReadResponse(newerReader, nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("the newer idle connection was not kept: %v", err)
	}
	if got := s.metric(t, "metahooks_connections_evicted_total"); got == "" || got == "0" {
		t.Errorf("evictions counted = %q, want at least 1", got)
	}
}

// TestConnectionCapWaitsForBusy: when every connection is busy, a new one
// waits (it is not refused or reset) and is served once one finishes.
func TestConnectionCapWaitsForBusy(t *testing.T) {
	s := startServer(t, serveConfig{limits: limitConfig{maxConnections: 1}})
	body := readFile(t, "testdata/metacontroller/sync-01-no-children.json")
	// In flight, body unfinished. The server answers Expect: 100-continue
	// once the handler reads the body: the request is then surely busy
	// (a fixed sleep was not enough on a loaded machine, where the new
	// connection could come before the header was read and evict it).
	busy, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { busy.Close() })
	fmt.Fprintf(busy, "POST /hooks/myapp/sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", len(body))
	busyReader := bufio.NewReader(busy)
	_ = busy.SetReadDeadline(time.Now().Add(5 * time.Second))
	if cont, err := http.ReadResponse(busyReader, nil); err != nil || cont.StatusCode != http.StatusContinue {
		t.Fatalf("the busy request's 100 Continue: %v", err)
	}
	_ = busy.SetReadDeadline(time.Time{})
	if _, err := busy.Write(body[:10]); err != nil {
		t.Fatal(err)
	}

	answered := make(chan int, 1)
	go func() {
		resp, err := http.Get(s.base + "/healthz")
		if err != nil {
			answered <- 0
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	select {
	case code := <-answered:
		t.Fatalf("a connection past the cap was answered %d while the only slot was busy", code)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := busy.Write(body[10:]); err != nil {
		t.Fatal(err)
	}
	readResp, err := http.ReadResponse(busyReader, nil)
	if err != nil || readResp.StatusCode != 200 {
		t.Fatalf("the busy request: %v", err)
	}
	readResp.Body.Close()
	busy.Close()
	select {
	case code := <-answered:
		if code != 200 {
			t.Errorf("the waiting connection was answered %d, want 200", code)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the waiting connection was never served")
	}
}

// TestConnectionCapKeepsBusyPooledConnection: at the cap, an idle connection
// that has served many requests (a client's pool, like Metacontroller's)
// outlives idle connections that served one, even newer ones.
func TestConnectionCapKeepsBusyPooledConnection(t *testing.T) {
	s := startServer(t, serveConfig{limits: limitConfig{maxConnections: 3}})
	pooled, pooledReader := keepAliveConn(t, s.addr)
	for range 5 {
		fmt.Fprint(pooled, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(pooledReader, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	time.Sleep(20 * time.Millisecond)
	for range 4 { // a flood of one-request connections, newer than the pooled one
		keepAliveConn(t, s.addr)
	}
	fmt.Fprint(pooled, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = pooled.SetReadDeadline(time.Now().Add(2 * time.Second))
	if resp, err := http.ReadResponse(pooledReader, nil); err != nil || resp.StatusCode != 200 {
		t.Errorf("the pooled connection was evicted for one-request connections: %v", err)
	}
}

// TestConnectionCapKeepsRequestOnItsWay: at the cap, a connection whose
// request header has begun to arrive is not the one evicted for a new
// connection: it completes its request, and the new one is served once it
// is idle.
func TestConnectionCapKeepsRequestOnItsWay(t *testing.T) {
	s := startServer(t, serveConfig{limits: limitConfig{maxConnections: 1}})
	dialAccepted := func(first string) (net.Conn, *bufio.Reader) {
		t.Helper()
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		fmt.Fprint(conn, first)
		for start := time.Now(); !s.listener.wasAccepted(conn.LocalAddr().String()); time.Sleep(time.Millisecond) {
			if time.Since(start) > 5*time.Second {
				t.Fatal("the connection was not accepted within 5 s")
			}
		}
		_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		return conn, bufio.NewReader(conn)
	}
	onItsWay, onItsWayReader := dialAccepted("GET /healthz HTTP/1.1\r\nHost: x\r\n") // the header's end still to come
	_, newerReader := dialAccepted("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(100 * time.Millisecond) // room for an eviction, if the cap would evict it
	fmt.Fprint(onItsWay, "\r\n")
	for name, r := range map[string]*bufio.Reader{"the connection with its request on its way": onItsWayReader, "the newer connection": newerReader} {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %d, want 200", name, resp.StatusCode)
		}
	}
}

// nothingConn is a connection evictableLocked can ask about: no socket, so
// the kernel holds nothing unread for it.
type nothingConn struct{ net.Conn }

// TestEvictionOrder holds evictableLocked to the order of the
// connLimitListener doc comment.
func TestEvictionOrder(t *testing.T) {
	type conn struct {
		name     string
		requests int           // 0: no request yet
		age      time.Duration // since accepted
		waiting  time.Duration // since it last went idle (or was accepted)
		heard    bool          // read bytes since accepted or idle
		lastRead time.Duration // ago
		trusted  bool
	}
	long, short := time.Second, 10*time.Millisecond
	cases := map[string]struct {
		reason string
		tls    bool
		busy   int
		conns  []conn
		want   string // "": none, the new connection waits
	}{
		"SilentPastGrace":   {reason: "sent nothing for longer than silentGrace", conns: []conn{{name: "silent", age: long, waiting: long}}, want: "silent"},
		"SilentWithinGrace": {reason: "just accepted: its request may be on the wire", conns: []conn{{name: "new", age: short, waiting: short}}},
		"HeaderBegun":       {reason: "read part of a header", conns: []conn{{name: "begun", age: long, waiting: long, heard: true, lastRead: long}}},
		"TLSHandshakeOnly":  {reason: "over TLS, read nothing since silentGrace: its handshake", tls: true, conns: []conn{{name: "handshake", age: long, waiting: long, heard: true, lastRead: long}}, want: "handshake"},
		"TLSReading":        {reason: "over TLS, read within silentGrace", tls: true, conns: []conn{{name: "reading", age: long, waiting: long, heard: true, lastRead: short}}},
		"IdleHeard":         {reason: "idle, and its next request has begun", conns: []conn{{name: "next", requests: 3, age: long, waiting: long, heard: true, lastRead: short}}},
		"SilentBeforeIdle":  {reason: "a silent connection goes before an idle one that waited longer", conns: []conn{{name: "idle", requests: 1, age: 3 * long, waiting: 2 * long}, {name: "silent", age: long, waiting: long}}, want: "silent"},
		"FewestRequests":    {reason: "among idle ones, the one that served the fewest", conns: []conn{{name: "pool", requests: 5, age: 3 * long, waiting: 2 * long}, {name: "one", requests: 1, age: long, waiting: long}}, want: "one"},
		"LongestIdle":       {reason: "among equals, the one idle longest", conns: []conn{{name: "newer", requests: 1, age: long, waiting: long}, {name: "older", requests: 1, age: 3 * long, waiting: 2 * long}}, want: "older"},
		"UntrustedFirst":    {reason: "an authenticated connection goes after any other", conns: []conn{{name: "metacontroller", requests: 1, age: 3 * long, waiting: 2 * long, trusted: true}, {name: "other", requests: 9, age: long, waiting: long}}, want: "other"},
		"TrustedWhileBusy":  {reason: "an authenticated one stays while a busy connection will free a slot", busy: 1, conns: []conn{{name: "metacontroller", requests: 1, age: long, waiting: long, trusted: true}}},
		"TrustedWhileOnWay": {reason: "an authenticated one stays while another's request is on its way", conns: []conn{{name: "metacontroller", requests: 1, age: long, waiting: long, trusted: true}, {name: "begun", age: long, waiting: long, heard: true}}},
		"TrustedLast":       {reason: "nothing else: the authenticated one idle longest", conns: []conn{{name: "newer", requests: 1, age: long, waiting: long, trusted: true}, {name: "older", requests: 8, age: 3 * long, waiting: 2 * long, trusted: true}}, want: "older"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := time.Now()
			l := newConnLimitListener(nil, len(tc.conns)+tc.busy, nil)
			l.tls = tc.tls
			names := map[*limitedConn]string{}
			for _, c := range tc.conns {
				lc := &limitedConn{Conn: nothingConn{}, owner: l, accepted: now.Add(-c.age), requests: c.requests}
				lc.heard.Store(c.heard)
				lc.lastRead.Store(now.Add(-c.lastRead).UnixNano())
				lc.trusted.Store(c.trusted)
				l.waiting[lc] = now.Add(-c.waiting)
				names[lc] = c.name
			}
			l.open = len(tc.conns) + tc.busy + 1 // the new connection's reserved slot
			l.mu.Lock()
			victim := l.evictableLocked()
			_, stillWaiting := l.waiting[victim]
			l.mu.Unlock()
			if diff := cmp.Diff(tc.want, names[victim]); diff != "" {
				t.Errorf("%s: evicted (-want +got):\n%s", tc.reason, diff)
			}
			if victim != nil && stillWaiting {
				t.Errorf("%s: the evicted connection is still waiting: it could be evicted twice", tc.reason)
			}
		})
	}
}
