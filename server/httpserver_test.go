package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptrace"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// testServer is the real server (serve) on a loopback port.
type testServer struct {
	base     string
	metrics  string // base URL of the metrics listener
	addr     string
	cancel   context.CancelFunc
	done     chan error
	listener *recordingListener
}

// startServer runs serve with cfg on 127.0.0.1:0 until the test ends.
func startServer(t *testing.T, cfg serveConfig) *testServer {
	t.Helper()
	return startServerWith(t, cfg, parentHooks(testDatabase(t)))
}

// startServerWith is startServer serving parents.
func startServerWith(t *testing.T, cfg serveConfig, parents []parentHook) *testServer {
	t.Helper()
	raw, err := listenTCP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.maxBodyBytes == 0 {
		cfg.maxBodyBytes = 1 << 20
	}
	metricsListener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listener := &recordingListener{Listener: raw, accepted: map[string]bool{}}
	ctx, cancel := context.WithCancel(context.Background())
	s := &testServer{base: "http://" + raw.Addr().String(), metrics: "http://" + metricsListener.Addr().String(), addr: raw.Addr().String(), cancel: cancel, done: make(chan error, 1), listener: listener}
	go func() {
		s.done <- serve(ctx, listeners{hooks: listener, metrics: metricsListener}, cfg, parents, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Error("server did not stop")
		}
	})
	return s
}

// metric returns the value of one sample line of /metrics ("" if absent).
func (s *testServer) metric(t *testing.T, series string) string {
	t.Helper()
	resp, err := http.Get(s.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	scanner := bufio.NewScanner(resp.Body)
	for scanner.Scan() {
		if value, ok := strings.CutPrefix(scanner.Text(), series+" "); ok {
			return value
		}
	}
	return ""
}

// waitMetric waits until series reads want on the metrics listener, and
// fails naming what it read last if it does not within 20 s. A request is
// counted once its answer is out (hookHandler.flush), so a client may read
// the answer before the count.
func (s *testServer) waitMetric(t *testing.T, series, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := s.metric(t, series)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s = %q, want %q", series, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recordingListener remembers when it was closed and which client addresses
// it accepted.
type recordingListener struct {
	net.Listener
	mu       sync.Mutex
	closedAt time.Time
	accepted map[string]bool
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.accepted[c.RemoteAddr().String()] = true
		l.mu.Unlock()
	}
	return c, err
}

func (l *recordingListener) Close() error {
	l.mu.Lock()
	if l.closedAt.IsZero() {
		l.closedAt = time.Now()
	}
	l.mu.Unlock()
	return l.Listener.Close()
}

// SyscallConn is the socket's, for drainBacklog.
func (l *recordingListener) SyscallConn() (syscall.RawConn, error) {
	return l.Listener.(syscall.Conn).SyscallConn()
}

func (l *recordingListener) wasAccepted(addr string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.accepted[addr]
}

func (l *recordingListener) closeTime() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closedAt
}

// TestShutdownWithKeepAliveClients sends from keep-alive clients and from
// clients that open a new connection per request all through a shutdown:
// none fails while the listener is open (answers during the delay carry
// Connection: close), and once it has closed the only failure is a connect
// refused. No request is reset, not even one on a connection the kernel had
// queued in the listen backlog and the server had not accepted yet (Linux
// resets those when the listener closes; drain stops new handshakes and
// accepts them first).
func TestShutdownWithKeepAliveClients(t *testing.T) {
	const delay, grace = time.Second, 3 * time.Second
	s := startServer(t, serveConfig{shutdownDelay: delay, shutdownGrace: grace})
	body := readFile(t, "testdata/metacontroller/sync-01-no-children.json")

	type outcome struct {
		start, at  time.Time
		err        error
		localAddr  string
		closeAsked bool
	}
	var (
		mu       sync.Mutex
		outcomes []outcome
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	send := func(client *http.Client) {
		defer wg.Done()
		for !stop.Load() {
			var local string
			start := time.Now()
			trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { local = info.Conn.LocalAddr().String() }}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, s.base+"/hooks/myapp/sync", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			o := outcome{start: start, at: time.Now(), err: err, localAddr: local}
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				o.closeAsked = resp.Close
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
				o.err = err
			}
			mu.Lock()
			outcomes = append(outcomes, o)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}
	for range 4 {
		wg.Add(1)
		go send(&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}})
	}
	for range 8 {
		wg.Add(1)
		go send(&http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}})
	}
	time.Sleep(300 * time.Millisecond)
	shutdownAt := time.Now()
	s.cancel()
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("serve returned %v, want nil", err)
		}
	case <-time.After(delay + grace + 5*time.Second):
		t.Fatal("serve did not stop")
	}
	time.Sleep(200 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	s.done <- nil // for the cleanup

	closedAt := s.listener.closeTime()
	if closedAt.IsZero() {
		t.Fatal("the listener was never closed")
	}
	if got := closedAt.Sub(shutdownAt); got < delay {
		t.Errorf("listener closed %v after SIGTERM, want at least --shutdown-delay %v", got, delay)
	}
	var okDuringDelay, closeDuringDelay, refused, resets int
	for _, o := range outcomes {
		switch {
		case o.err == nil:
			if o.start.After(shutdownAt) && o.at.Before(closedAt) {
				okDuringDelay++
				if o.closeAsked {
					closeDuringDelay++
				}
			}
		case o.at.Before(closedAt):
			t.Errorf("request failed before the listener closed: %v", o.err)
		case isDialError(o.err) && errors.Is(o.err, syscall.ECONNREFUSED):
			refused++ // nothing was sent; the client may retry elsewhere
		default:
			resets++
			report := t.Errorf
			if runtime.GOOS != "linux" {
				report = t.Logf // drainBacklog is Linux only: elsewhere the close may reset what the backlog holds
			}
			report("request failed %v after the listener closed, not as connection refused (connection %q, accepted by the server: %t): %v",
				o.at.Sub(closedAt), o.localAddr, o.localAddr != "" && s.listener.wasAccepted(o.localAddr), o.err)
		}
	}
	if okDuringDelay == 0 || closeDuringDelay != okDuringDelay {
		t.Errorf("during the delay %d requests answered 200, %d of them with Connection: close; want some, all with it", okDuringDelay, closeDuringDelay)
	}
	if refused == 0 {
		t.Errorf("no request was refused after the listener closed; the clients did not send throughout")
	}
	t.Logf("%d requests: %d served during the delay, %d refused after the close, %d reset", len(outcomes), okDuringDelay, refused, resets)
}

func isDialError(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// TestShutdownWaitsForInFlight: a request in flight when the listener closes
// finishes within --shutdown-grace.
func TestShutdownWaitsForInFlight(t *testing.T) {
	s := startServer(t, serveConfig{shutdownDelay: 100 * time.Millisecond, shutdownGrace: 5 * time.Second})
	body := readFile(t, "testdata/metacontroller/sync-01-no-children.json")
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Send the header and half the body, then the rest after the listener closed.
	fmt.Fprintf(conn, "POST /hooks/myapp/sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	half := len(body) / 2
	if _, err := conn.Write(body[:half]); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	s.cancel()
	deadline := time.Now().Add(3 * time.Second)
	for s.listener.closeTime().IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("listener never closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := conn.Write(body[half:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight request lost on shutdown: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("in-flight request answered %d, want 200", resp.StatusCode)
	}
}

func TestLimitFlags(t *testing.T) {
	cfg, err := parseServeFlags([]string{"--max-in-flight", "5", "--max-connections", "10", "--request-timeout", "7s", "--idle-timeout", "20s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := limitConfig{maxInFlight: 5, maxConnections: 10, requestTimeout: 7 * time.Second, idleTimeout: 20 * time.Second}
	if cfg.limits != want {
		t.Errorf("limits = %+v, want %+v", cfg.limits, want)
	}
	defaults, err := parseServeFlags(nil, io.Discard)
	if err != nil || defaults.limits != defaultLimits {
		t.Errorf("default limits = %+v, %v; want %+v", defaults.limits, err, defaultLimits)
	}
	if defaults.limits.requestTimeout+writeMargin >= metacontrollerHookTimeout {
		t.Errorf("request timeout %v + write margin %v is not under Metacontroller's %v", defaults.limits.requestTimeout, writeMargin, metacontrollerHookTimeout)
	}
	for _, bad := range [][]string{{"--max-in-flight", "-1"}, {"--max-connections", "0"}, {"--request-timeout", "0s"}, {"--idle-timeout", "-1s"}} {
		if _, err := parseServeFlags(bad, io.Discard); err == nil {
			t.Errorf("parseServeFlags(%v) accepted a bad limit", bad)
		}
	}
}
