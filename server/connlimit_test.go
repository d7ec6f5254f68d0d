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
