package load

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingServer answers every request with status after reading its body,
// and counts the requests and the bytes of body it read.
func countingServer(t *testing.T, status int, answer string) (addr string, requests, bodyBytes *atomic.Int64) {
	requests, bodyBytes = &atomic.Int64{}, &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		bodyBytes.Add(n)
		requests.Add(1)
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), requests, bodyBytes
}

func TestRunCountsEveryAnswer(t *testing.T) {
	// 5 KB: net/http sends it chunked, which the client must read right.
	addr, requests, bodyBytes := countingServer(t, 200, strings.Repeat("x", 5000))
	body := []byte(`{"parent":{}}`)
	res, err := Run(Target{Addr: addr, Path: "/hooks/myapp/sync", Body: body}, Options{Concurrency: 4, Warmup: 50 * time.Millisecond, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Errors != 0 || res.Requests == 0 {
		t.Fatalf("Run = %v, want requests and no errors", res)
	}
	served := requests.Load()
	if int64(res.Requests) > served {
		t.Errorf("Run counted %d requests, the server answered only %d (warm-up included)", res.Requests, served)
	}
	if bodyBytes.Load() != served*int64(len(body)) {
		t.Errorf("server read %d body bytes for %d requests of %d bytes", bodyBytes.Load(), served, len(body))
	}
	if res.Bytes < int64(res.Requests)*5000 {
		t.Errorf("Run read %d answer bytes for %d answers of 5000 bytes", res.Bytes, res.Requests)
	}
	if !(res.P50 > 0 && res.P50 <= res.P90 && res.P90 <= res.P99 && res.P99 <= res.Max) {
		t.Errorf("percentiles out of order: %v %v %v %v", res.P50, res.P90, res.P99, res.Max)
	}
}

func TestRunCountsWrongStatusAsErrors(t *testing.T) {
	addr, _, _ := countingServer(t, 500, `{"error":"x"}`)
	res, err := Run(Target{Addr: addr, Path: "/", Body: []byte(`{}`)}, Options{Concurrency: 2, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 0 || res.Errors == 0 || !strings.Contains(res.FirstError, "status 500") {
		t.Errorf("Run against a 500 server = %v, want only errors naming status 500", res)
	}
}

func TestRunAtRateSendsNoMoreThanTheRate(t *testing.T) {
	addr, requests, _ := countingServer(t, 412, "")
	res, err := Run(Target{Addr: addr, Path: "/", Body: []byte(`{}`), WantStatus: 412}, Options{Concurrency: 4, Duration: 500 * time.Millisecond, Rate: 100})
	if err != nil {
		t.Fatal(err)
	}
	// Starts are spaced 10 ms apart over 500 ms: 50 at most, whatever the speed.
	if res.Requests == 0 || res.Requests > 50 || requests.Load() > 50 {
		t.Errorf("Run at 100/s for 500 ms = %v (server saw %d), want 1..50 requests", res, requests.Load())
	}
}

func TestSend(t *testing.T) {
	cases := []struct {
		reason string
		status int
		want   string // "": no error; else in the error
	}{
		{"every answer as wanted: each request sent once", 200, ""},
		{"another status fails at the first answer", 503, "request 1 of 7: status 503, want 200"},
	}
	for _, tc := range cases {
		addr, requests, _ := countingServer(t, tc.status, strings.Repeat("y", 5000))
		err := Send(Target{Addr: addr, Path: "/", Body: []byte(`{}`)}, 7)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: Send: %v", tc.reason, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: Send error = %v, want one saying %q", tc.reason, err, tc.want)
		case tc.want == "" && requests.Load() != 7:
			t.Errorf("%s: the server answered %d requests, want 7", tc.reason, requests.Load())
		}
	}
}

func TestRunFailsWithoutServer(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(Target{Addr: addr, Path: "/"}, Options{Duration: 50 * time.Millisecond}); err == nil {
		t.Error("Run against a closed port succeeded")
	}
}

func TestPercentile(t *testing.T) {
	sorted := []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 5}, {0.9, 9}, {0.99, 10}, {1, 10}, {0, 1}} {
		if got := percentile(sorted, tc.p); got != tc.want {
			t.Errorf("percentile(1..10, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if got := percentile(nil, 0.5); got != 0 {
		t.Errorf("percentile(nil) = %v, want 0", got)
	}
}
