package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"metahooks/hooks/composite"
)

// rawRequest writes a hook request header declaring contentLength, then
// the given part of the body, and returns the connection.
func rawRequest(t *testing.T, addr string, contentLength int, part []byte) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST /hooks/myapp/sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", contentLength)
	if _, err := conn.Write(part); err != nil {
		t.Fatal(err)
	}
	return conn
}

// readAnswer reads one response from conn within timeout and checks it is
// a JSON error naming want.
func readAnswer(t *testing.T, conn net.Conn, timeout time.Duration, wantCode int, want string) *http.Response {
	t.Helper()
	_ = conn.SetReadDeadline(time.Now().Add(timeout))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer within %v: %v", timeout, err)
	}
	defer resp.Body.Close()
	var body errorBody
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("answer %d is not a JSON error: %v", resp.StatusCode, err)
	}
	if resp.StatusCode != wantCode || !strings.Contains(body.Error, want) {
		t.Errorf("answer = %d %q, want %d naming %q", resp.StatusCode, body.Error, wantCode, want)
	}
	return resp
}

// TestDeclaredTooLargeIs413AtOnce: a Content-Length over the limit is
// refused from the header, without waiting for (or reading) the body.
func TestDeclaredTooLargeIs413AtOnce(t *testing.T) {
	s := startServer(t, serveConfig{maxBodyBytes: 1 << 20})
	conn := rawRequest(t, s.addr, 64<<20, bytes.Repeat([]byte(" "), 64<<10))
	readAnswer(t, conn, 2*time.Second, http.StatusRequestEntityTooLarge, "--max-body-bytes")
}

// TestChunkedTooLargeIs413: a body without Content-Length is cut at the limit.
func TestChunkedTooLargeIs413(t *testing.T) {
	s := startServer(t, serveConfig{maxBodyBytes: 64 << 10})
	req, _ := http.NewRequest(http.MethodPost, s.base+"/hooks/myapp/sync", io.MultiReader(strings.NewReader(`{"parent":`), strings.NewReader(strings.Repeat(" ", 128<<10))))
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("chunked body over the limit = %d, want 413", resp.StatusCode)
	}
}

// TestSlowBodyIs408: a body that does not arrive within --request-timeout
// is answered 408, not 500, and is not counted as a server error.
func TestSlowBodyIs408(t *testing.T) {
	s := startServer(t, serveConfig{limits: limitConfig{requestTimeout: 300 * time.Millisecond}})
	conn := rawRequest(t, s.addr, 1000, []byte(`{"parent":`))
	readAnswer(t, conn, 3*time.Second, http.StatusRequestTimeout, "--request-timeout")
	s.waitMetric(t, `metahooks_hook_requests_total{code="408",hook="sync",parent="myapp"}`, "1")
}

// TestClientClosedIsNot500: a client that hangs up mid-body is counted as
// client_closed, never as a 5xx.
func TestClientClosedIsNot500(t *testing.T) {
	s := startServer(t, serveConfig{})
	conn := rawRequest(t, s.addr, 1000, []byte(`{"parent":`))
	time.Sleep(50 * time.Millisecond)
	conn.Close()
	s.waitMetric(t, `metahooks_hook_requests_total{code="client_closed",hook="sync",parent="myapp"}`, "1")
	for _, code := range []string{"500", "400"} {
		if got := s.metric(t, `metahooks_hook_requests_total{code="`+code+`",hook="sync",parent="myapp"}`); got != "" {
			t.Errorf("a client that went away was counted as %s (%s)", code, got)
		}
	}
}

// TestServerDeadlineIsNotClientClosed: an answer the server's own write
// deadline (--request-timeout + writeMargin) cut off is counted as
// codeServerTimeout (504), a server error, not as client_closed, and not as
// the 200 it began as: a hook still computing when the deadline passed
// (its small answer fails when flushed), and a huge answer its client,
// still connected, does not read (the write blocks until the deadline).
func TestServerDeadlineIsNotClientClosed(t *testing.T) {
	const requestTimeout = 200 * time.Millisecond
	writeTimeout := requestTimeout + writeMargin
	empty := func() *composite.Response {
		return &composite.Response{Status: json.RawMessage(`{}`), Children: []composite.Child{}}
	}
	huge := json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"huge"},"data":{"x":"` + strings.Repeat("x", 16<<20) + `"}}`)
	parents := []parentHook{
		{route: "slow", apiVersion: "example.com/v1", kind: "Slow",
			sync: func(*composite.Request, time.Time) (*composite.Response, error) {
				time.Sleep(writeTimeout + 300*time.Millisecond) // the deadline was set when the header was read
				return empty(), nil
			}},
		{route: "huge", apiVersion: "example.com/v1", kind: "Huge",
			sync: func(*composite.Request, time.Time) (*composite.Response, error) {
				r := empty()
				r.Children = []composite.Child{{APIVersion: "v1", Kind: "ConfigMap", Name: "huge", JSON: huge}}
				return r, nil
			}},
	}
	s := startServerWith(t, serveConfig{limits: limitConfig{requestTimeout: requestTimeout}}, parents)
	for _, p := range parents {
		t.Run(p.route, func(t *testing.T) {
			conn, err := net.Dial("tcp", s.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if tcp, ok := conn.(*net.TCPConn); ok {
				_ = tcp.SetReadBuffer(4 << 10) // the client reads nothing; its window stays small
			}
			body := fmt.Sprintf(`{"parent":{"kind":%q},"children":{}}`, p.kind)
			fmt.Fprintf(conn, "POST /hooks/%s/sync HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", p.route, len(body), body)
			series := func(code string) string {
				return `metahooks_hook_requests_total{code="` + code + `",hook="sync",parent="` + p.route + `"}`
			}
			s.waitMetric(t, series(codeServerTimeout), "1")
			for _, code := range []string{codeClientClosed, "200"} {
				if got := s.metric(t, series(code)); got != "" && got != "0" {
					t.Errorf("an answer the server's write deadline cut off was counted as %s (%s)", code, got)
				}
			}
		})
	}
}

// TestInFlightBudget: past the budget a request is answered 429 with
// Retry-After before its body is read, while a small request still fits
// beside large ones in flight.
func TestInFlightBudget(t *testing.T) {
	const maxBody = 1 << 20
	s := startServer(t, serveConfig{maxBodyBytes: maxBody, limits: limitConfig{maxInFlight: 2}})
	// Two requests of the largest size, held in flight by a body that never
	// ends, then a third. On a loaded machine the server may read the
	// third's headers before the second's: then the third waits for its
	// body and the second is refused, so all three are let go (their
	// shares with them) and sent again.
	var resp *http.Response
	refused := 0 // 429s seen
	answer := func(conn net.Conn, within time.Duration) *http.Response {
		if err := conn.SetReadDeadline(time.Now().Add(within)); err != nil {
			t.Fatal(err)
		}
		r, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return nil
		}
		if r.StatusCode == http.StatusTooManyRequests {
			refused++
		}
		return r
	}
	for deadline := time.Now().Add(time.Minute); resp == nil; {
		if time.Now().After(deadline) {
			t.Fatal("no 429 within a minute beside two requests of the largest size held in flight")
		}
		held := []net.Conn{rawRequest(t, s.addr, maxBody, []byte(`{"parent":`)), rawRequest(t, s.addr, maxBody-256<<10, []byte(`{"parent":`))}
		time.Sleep(100 * time.Millisecond)
		third := rawRequest(t, s.addr, maxBody, nil)
		r := answer(third, 2*time.Second)
		answered := answer(held[0], 100*time.Millisecond) != nil
		answered = answer(held[1], 100*time.Millisecond) != nil || answered
		if r == nil || answered {
			for _, c := range append(held, third) {
				c.Close()
			}
			continue
		}
		var body errorBody
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.StatusCode != http.StatusTooManyRequests || !strings.Contains(body.Error, "--max-in-flight") {
			t.Fatalf("beside two requests of the largest size: %d %q (%v), want 429 naming --max-in-flight", r.StatusCode, body.Error, err)
		}
		r.Body.Close()
		resp = r
	}
	if got := resp.Header.Get("Retry-After"); got != "1" {
		t.Errorf("Retry-After = %q, want 1", got)
	}
	// A small sync takes its share, which is still free; so is the small
	// requests' reserve once the main budget is spent.
	body := readFile(t, "testdata/metacontroller/sync-01-no-children.json")
	small, err := http.Post(s.base+"/hooks/myapp/sync", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	small.Body.Close()
	if small.StatusCode != http.StatusOK {
		t.Errorf("a small sync beside the large ones = %d, want 200", small.StatusCode)
	}
	if got, want := s.metric(t, `metahooks_hook_rejected_busy_total{hook="sync",parent="myapp"}`), strconv.Itoa(refused); got != want {
		t.Errorf("rejected counted = %q, want %s (the 429s answered)", got, want)
	}
}

func TestInFlightShare(t *testing.T) {
	b := newInFlightBudget(3, 8<<20, nil)
	cases := map[string]struct {
		reason        string
		contentLength int64
		want          int64
	}{
		"Unknown":  {reason: "chunked: the whole body limit and the slack", contentLength: -1, want: 8<<20 + slackShare},
		"Tiny":     {reason: "even a tiny body may spend the decode budget's slack", contentLength: 100, want: 100 + slackShare},
		"Declared": {reason: "what the header declares", contentLength: 3 << 20, want: 3<<20 + slackShare},
		"Over":     {reason: "never more than the limit", contentLength: 20 << 20, want: 8<<20 + slackShare},
	}
	for name, tc := range cases {
		if got := b.share(tc.contentLength); got != tc.want {
			t.Errorf("%s (%s): share(%d) = %d, want %d", name, tc.reason, tc.contentLength, got, tc.want)
		}
	}
	var releases []func()
	for range 3 {
		release, ok := b.tryAcquire(8 << 20)
		if !ok {
			t.Fatal("budget of 3 refused one of the first 3 largest requests")
		}
		releases = append(releases, release)
	}
	if _, ok := b.tryAcquire(smallShare + 1); ok {
		t.Error("a spent budget accepted another request")
	}
	var small []func()
	for range smallReserve / b.share(100) {
		release, ok := b.tryAcquire(100)
		if !ok {
			t.Fatal("the small requests' reserve refused a small request with the main budget spent")
		}
		small = append(small, release)
	}
	if _, ok := b.tryAcquire(100); ok {
		t.Error("a spent reserve accepted another small request")
	}
	if _, ok := b.tryAcquire(smallShare + 1); ok {
		t.Error("a request larger than smallShare took from the reserve")
	}
	small[0]()
	if _, ok := b.tryAcquire(100); !ok {
		t.Error("a released reserve share was not given back")
	}
	releases[0]()
	if _, ok := b.tryAcquire(8 << 20); !ok {
		t.Error("a released share was not given back")
	}
}
