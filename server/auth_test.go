package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Tokens of the tests; none may ever appear in a log line.
const (
	currentToken = "current-4f1c9a7e2b6d8035e1a9c4b7d2f60e83"
	nextToken    = "next-9b2e7d4a1c6f3085b7e2a9d4c1f60b37"
	rotatedToken = "rotated-3a8d1f6c9e2b7045a1d8c3f6b9e20d54"
)

// TestBearerTokens goes through the real server on a loopback port: every
// refusal is 401 with the same body and no Secret, the current and the next
// token get the Database's answer, and a token file swapped the way the
// kubelet swaps a Secret volume takes effect within 10 s.
func TestBearerTokens(t *testing.T) {
	volume := newSecretVolume(t, map[string][]byte{"tokens": []byte("# rotation: current and next\n" + currentToken + "\n\n  " + nextToken + "  \n")})
	srv := startAuthServer(t, securityConfig{tokenFile: volume.path("tokens")})
	client := freshClient(nil)
	body := readFile(t, "../examples/requests/database-first-sync.json")
	post := func(header ...string) (int, string) {
		t.Helper()
		code, answer, err := call(client, http.MethodPost, srv.hookURL+"/hooks/database/sync", body, header...)
		if err != nil {
			t.Fatal(err)
		}
		return code, answer
	}

	refusals := map[string]struct {
		reason string
		header []string
	}{
		"NoToken":         {reason: "no Authorization header"},
		"WrongToken":      {reason: "a token not in the file", header: []string{"Authorization", "Bearer " + currentToken + "x"}},
		"Prefix":          {reason: "a prefix of a token", header: []string{"Authorization", "Bearer " + currentToken[:10]}},
		"Basic":           {reason: "the token sent as Basic", header: []string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("metacontroller:"+currentToken))}},
		"BasicRaw":        {reason: "the raw token under Basic", header: []string{"Authorization", "Basic " + currentToken}},
		"NoScheme":        {reason: "the token alone", header: []string{"Authorization", currentToken}},
		"EmptyBearer":     {reason: "Bearer and nothing", header: []string{"Authorization", "Bearer "}},
		"CommentAsToken":  {reason: "a comment line is no token", header: []string{"Authorization", "Bearer #"}},
		"TwoHeaders":      {reason: "a wrong and a right header", header: []string{"Authorization", "Bearer wrong", "Authorization", "Bearer " + currentToken}},
		"TokenInOtherHdr": {reason: "the token in another header", header: []string{"X-Auth-Token", currentToken}},
	}
	for name, tc := range refusals {
		t.Run(name, func(t *testing.T) {
			code, answer := post(tc.header...)
			if code != http.StatusUnauthorized {
				t.Fatalf("%s: %d, want 401", tc.reason, code)
			}
			if diff := cmp.Diff(`{"error":"credentials are missing or wrong"}`+"\n", answer); diff != "" {
				t.Errorf("%s: the body says more than credentials are missing or wrong (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
	for name, token := range map[string]string{"Current": currentToken, "Next": nextToken, "LowercaseScheme": nextToken} {
		scheme := "Bearer "
		if name == "LowercaseScheme" {
			scheme = "bearer "
		}
		if code, answer := post("Authorization", scheme+token); code != 200 || !strings.Contains(answer, `"kind":"Secret"`) {
			t.Errorf("%s token: %d %.200s, want 200 with the credentials Secret", name, code, answer)
		}
	}
	if code, text, _ := call(client, http.MethodGet, srv.metricsURL+"/metrics", nil); code != 200 || !strings.Contains(text, `metahooks_hook_unauthorized_total{hook="sync",parent="database"} `+strconv.Itoa(len(refusals))) {
		t.Errorf("metahooks_hook_unauthorized_total is not %d for the sync refusals:\n%s", len(refusals), text)
	}

	// Rotation, step 2: the kubelet swaps the volume to the next token only.
	volume.update(t, map[string][]byte{"tokens": []byte(nextToken + "\n")})
	eventually(t, "the removed token refused", func() bool { code, _ := post("Authorization", "Bearer "+currentToken); return code == 401 })
	if code, _ := post("Authorization", "Bearer "+nextToken); code != 200 {
		t.Errorf("the remaining token: %d, want 200", code)
	}
	// The file rewritten in place with a new token.
	writeTestFile(t, filepath.Join(volume.dir, "..data", "tokens"), []byte(rotatedToken+"\n"))
	eventually(t, "the added token accepted", func() bool { code, _ := post("Authorization", "Bearer "+rotatedToken); return code == 200 })
	if code, _ := post("Authorization", "Bearer "+nextToken); code != 401 {
		t.Errorf("the replaced token: %d, want 401", code)
	}
	// A file with no token left refuses everything.
	volume.update(t, map[string][]byte{"tokens": []byte("# none\n")})
	eventually(t, "an emptied token file refusing every token", func() bool { code, _ := post("Authorization", "Bearer "+rotatedToken); return code == 401 })

	logs := srv.log.String()
	for _, token := range []string{currentToken, nextToken, rotatedToken, currentToken[:10]} {
		if strings.Contains(logs, token) {
			t.Errorf("a token reached the log:\n%s", logs)
		}
	}
	if !strings.Contains(logs, "reloaded bearer tokens") || !strings.Contains(logs, "holds no token") {
		t.Errorf("the log does not tell of the reloads:\n%s", logs)
	}
}

// TestAuthenticatorNeverRunsHook: a refused request never reaches the hook.
func TestAuthenticatorNeverRunsHook(t *testing.T) {
	tokens := &tokenSet{}
	path := filepath.Join(t.TempDir(), "tokens")
	writeTestFile(t, path, []byte(currentToken+"\n"))
	if n, err := tokens.load(path); n != 1 || err != nil {
		t.Fatalf("load = %d, %v", n, err)
	}
	ran := false
	handler := (&authenticator{tokens: tokens}).protect("database", "sync", newMetrics(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran = true }))
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/hooks/database/sync", strings.NewReader("{}")))
	if ran || rec.Code != 401 || rec.Header().Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("without a token: hook ran %v, code %d, WWW-Authenticate %q; want no run, 401, Bearer", ran, rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
}

func TestTokenFileErrors(t *testing.T) {
	cases := map[string]struct {
		reason  string
		content string
		wantErr string
	}{
		"Empty":        {reason: "no token at start", content: "# only a comment\n\n", wantErr: "holds no token"},
		"InnerSpace":   {reason: "a header line, not a token", content: "Bearer " + currentToken + "\n", wantErr: "line 1"},
		"MissingFile":  {reason: "no such file", wantErr: "cannot read the token file"},
		"TwoTokensCRL": {reason: "CRLF lines are fine", content: currentToken + "\r\n" + nextToken + "\r\n"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tokens")
			if tc.content != "" {
				writeTestFile(t, path, []byte(tc.content))
			}
			_, err := newTokenSet(t.Context(), path, "token", reloadInterval, nil, slog.New(slog.NewJSONHandler(io.Discard, nil)))
			if (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("%s\nnewTokenSet = %v, want an error with %q", tc.reason, err, tc.wantErr)
			}
			if err != nil && (strings.Contains(err.Error(), currentToken) || strings.Contains(err.Error(), nextToken)) {
				t.Errorf("the error repeats a token: %v", err)
			}
		})
	}
}

// countingListener wraps the hook listener and counts, per client address,
// the bytes the server read from each connection.
type countingListener struct {
	net.Listener
	mu    *sync.Mutex // shared by listeners that share conns
	conns map[string]*countingConn
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &countingConn{Conn: c}
	l.mu.Lock()
	l.conns[c.RemoteAddr().String()] = cc
	l.mu.Unlock()
	return cc, nil
}

// SyscallConn is the socket's, for drainBacklog.
func (l *countingListener) SyscallConn() (syscall.RawConn, error) {
	return l.Listener.(syscall.Conn).SyscallConn()
}

// read is what the server has read from the connection of the client at addr.
func (l *countingListener) read(addr string) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.conns[addr]; c != nil {
		return c.read.Load()
	}
	return -1
}

type countingConn struct {
	net.Conn
	read atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// SyscallConn and CloseWrite are the TCP connection's, as if unwrapped.
func (c *countingConn) SyscallConn() (syscall.RawConn, error) {
	return c.Conn.(syscall.Conn).SyscallConn()
}

func (c *countingConn) CloseWrite() error { return c.Conn.(*net.TCPConn).CloseWrite() }

// startCountingAuthServer serves the hooks with bearer token currentToken,
// /metrics with the same token, and --request-timeout 30s, both listeners
// behind a countingListener, until the test ends.
func startCountingAuthServer(t *testing.T) (hooks, metrics string, counted *countingListener) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	writeTestFile(t, path, []byte(currentToken+"\n"))
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	l, err := openListeners(ctx, "127.0.0.1:0", securityConfig{tokenFile: path, metricsTokenFile: path, metricsAddr: "127.0.0.1:0", reloadInterval: reloadInterval}, log)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	counted = &countingListener{Listener: l.hooks, conns: map[string]*countingConn{}, mu: &sync.Mutex{}}
	l.hooks = counted
	l.metrics = &countingListener{Listener: l.metrics, conns: counted.conns, mu: counted.mu}
	cfg := serveConfig{maxBodyBytes: 1 << 20, shutdownGrace: 5 * time.Second, limits: limitConfig{requestTimeout: 30 * time.Second}}
	done := make(chan error, 1)
	go func() { done <- serve(ctx, l, cfg, parentHooks(testDatabase(t)), log) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return counted.Addr().String(), l.metrics.Addr().String(), counted
}

// TestRefusalClosesAtOnce: a request that fails authentication, or that
// declares a body on a route that reads none (a 404, a 405, a probe, the
// metrics listener), gets its answer at once, with Connection: close, and
// its connection is closed, whatever body it declares or trickles; the
// server reads at most refusalReadBytes of the body (plus what one read of
// the header brought). With --request-timeout 30s, a drain bounded by the
// read deadline (net/http's after a handler) fails the 10 s bounds below:
// before closeUnreadBodies every case but the hook routes' did, on the
// hook listener by the bound, on the metrics listener (read timeout 5 s)
// by the bytes read: 128 KiB sent at once were all drained.
func TestRefusalClosesAtOnce(t *testing.T) {
	hooks, metrics, counted := startCountingAuthServer(t)
	const bound = 10 * time.Second // generous: the answer needs milliseconds
	const (
		unauthorized = "401 close=true {\"error\":\"credentials are missing or wrong\"}\n"
		healthy      = "200 close=true {\"status\":\"ok\"}\n"
	)
	cases := map[string]struct {
		reason  string
		metrics bool   // on the metrics listener
		request string // method and path; POST /hooks/myapp/sync if empty
		auth    string
		length  int // declared Content-Length
		burst   int // body bytes sent at once after the header
		trickle bool
		want    string
	}{
		"TrickledBody":   {reason: "256 KiB declared, 192 KiB sent at once, then a byte every 50 ms", auth: "Authorization: Bearer wrong\r\n", length: 256 << 10, burst: 192 << 10, trickle: true, want: unauthorized},
		"NoTokenTrickle": {reason: "no token, 256 KiB declared, a byte every 50 ms", length: 256 << 10, trickle: true, want: unauthorized},
		"SmallBody":      {reason: "a whole small body: the connection must not stay open for another request", auth: "Authorization: Bearer wrong\r\n", length: 2, burst: 2, want: unauthorized},
		"NoRoute": {reason: "a 404 reads no body: a trickled one must not hold the connection", request: "POST /nope", length: 256 << 10, trickle: true,
			want: "404 close=true {\"error\":\"no route \\\"/nope\\\"; hooks are POST /hooks/\\u003cparent\\u003e/sync and /hooks/\\u003cparent\\u003e/finalize, and /hooks/\\u003cparent\\u003e/customize for a parent that has one\"}\n"},
		"WrongMethod": {reason: "a 405 on a hook route reads no body", request: "PUT /hooks/myapp/sync", length: 256 << 10, trickle: true,
			want: "405 close=true {\"error\":\"method \\\"PUT\\\" is not allowed on \\\"/hooks/myapp/sync\\\"\"}\n"},
		"UnknownHook":   {reason: "a POST under /hooks/ that names no hook is a 404, not a hook", request: "POST /hooks/nope/sync", length: 256 << 10, trickle: true, want: "404 close=true"},
		"ProbeWithBody": {reason: "a probe that declares a body is answered and closed", request: "GET /healthz", length: 256 << 10, trickle: true, want: healthy},
		"MetricsNoToken": {reason: "/metrics without a token, a trickled body", metrics: true, request: "GET /metrics", length: 256 << 10, burst: 128 << 10, trickle: true,
			want: unauthorized},
		"MetricsPost": {reason: "a POST on the metrics listener, no token", metrics: true, request: "POST /healthz", length: 256 << 10, burst: 128 << 10, trickle: true, want: "405 close=true"},
		"MetricsProbe": {reason: "a probe on the metrics listener with a body", metrics: true, request: "GET /readyz", length: 256 << 10, burst: 128 << 10, trickle: true,
			want: "200 close=true {\"status\":\"ready\"}\n"},
		"MetricsWithToken": {reason: "even a scraper with the token: nothing there reads a body", metrics: true, request: "GET /metrics", auth: "Authorization: Bearer " + currentToken + "\r\n", length: 256 << 10, burst: 128 << 10, trickle: true,
			want: "200 close=true"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			addr, request := hooks, tc.request
			if tc.metrics {
				addr = metrics
			}
			if request == "" {
				request = "POST /hooks/myapp/sync"
			}
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			header := fmt.Sprintf("%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n", request, tc.auth, tc.length)
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				if _, err := io.WriteString(conn, header); err != nil {
					return
				}
				if _, err := conn.Write(bytes.Repeat([]byte(" "), tc.burst)); err != nil || !tc.trickle {
					return
				}
				for sent := tc.burst; sent < tc.length; sent++ {
					select {
					case <-stop:
						return
					case <-time.After(50 * time.Millisecond):
					}
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			}()
			_ = conn.SetReadDeadline(time.Now().Add(bound))
			r := bufio.NewReader(conn)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("%s: no answer within %s: %v", tc.reason, bound, err)
			}
			answer, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			got := fmt.Sprintf("%d close=%v %s", resp.StatusCode, resp.Close, answer)
			if !strings.HasSuffix(tc.want, "\n") { // a prefix: the rest is long or varies
				got = got[:min(len(got), len(tc.want))]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: the answer (-want +got):\n%s", tc.reason, diff)
			}
			_ = conn.SetReadDeadline(time.Now().Add(bound))
			if _, err := r.ReadByte(); err == nil || isTimeout(err) {
				t.Fatalf("%s: the connection is still open %s after the answer (read: %v)", tc.reason, bound, err)
			}
			n := counted.read(conn.LocalAddr().String())
			t.Logf("%s: %d and close; the server read %d bytes", tc.reason, resp.StatusCode, n)
			limit := int64(len(header)) + refusalReadBytes + 4<<10 // one 4 KiB read may bring body bytes with the header
			if n < int64(len(header)) || n > limit {
				t.Errorf("%s: the server read %d bytes of the connection, want at most %d (the header, %d, and %d of the body)", tc.reason, n, limit, len(header), limit-int64(len(header)))
			}
		})
	}
}

// TestTokenFileRevocation: a token file that goes away or stops parsing
// never leaves a removed token working, for the hook tokens
// (--auth-token-file) and the metrics tokens (--metrics-auth-token-file)
// alike. Deleted: every token is refused (fail closed) until the file is
// back. A bad line: only the tokens both loaded before and still listed in
// the new file are accepted; one the bad file adds is not. Either way the
// reload metrics say so, and the log holds no token.
func TestTokenFileRevocation(t *testing.T) {
	cases := map[string]struct {
		reason      string
		change      func(t *testing.T, path string)
		accepted    []string // tokens that must be accepted after the change
		refused     []string // tokens that must get 401 after the change
		wantSuccess string   // metahooks_config_last_reload_success after the change
	}{
		"Deleted": {
			reason:      "a deleted token file revokes every token",
			change:      func(t *testing.T, path string) { removeTestFile(t, path) },
			refused:     []string{currentToken, nextToken},
			wantSuccess: "0",
		},
		"BadLine": {
			reason: "a bad line: the removed token refused, the kept one accepted, the added one not granted",
			change: func(t *testing.T, path string) {
				writeTestFile(t, path, []byte(nextToken+"\nnot a token\n"+rotatedToken+"\n"))
			},
			accepted:    []string{nextToken},
			refused:     []string{currentToken, rotatedToken},
			wantSuccess: "0",
		},
		"Emptied": {
			reason:      "a file emptied (truncated, or every line a comment) revokes every token and counts as a failed reload: a success would hide that everything is refused",
			change:      func(t *testing.T, path string) { writeTestFile(t, path, []byte("# nothing\n")) },
			refused:     []string{currentToken, nextToken},
			wantSuccess: "0",
		},
		"Rotated": {
			reason:      "a good file: what it lists and nothing else",
			change:      func(t *testing.T, path string) { writeTestFile(t, path, []byte(rotatedToken+"\n")) },
			accepted:    []string{rotatedToken},
			refused:     []string{currentToken, nextToken},
			wantSuccess: "1",
		},
	}
	const otherToken = "other-5d2a9c7e1b4f8036d2a7c5e9b1f40c26" // in the file that does not change
	for name, tc := range cases {
		for _, role := range []string{"token", "metrics_token"} {
			t.Run(name+"/"+role, func(t *testing.T) {
				dir := t.TempDir()
				changed, unchanged := filepath.Join(dir, "changed"), filepath.Join(dir, "unchanged")
				writeTestFile(t, changed, []byte(currentToken+"\n"+nextToken+"\n"))
				writeTestFile(t, unchanged, []byte(otherToken+"\n"))
				sec := securityConfig{tokenFile: changed, metricsTokenFile: unchanged, reloadInterval: 20 * time.Millisecond}
				if role == "metrics_token" {
					sec.tokenFile, sec.metricsTokenFile = unchanged, changed
				}
				srv := startAuthServer(t, sec)
				body := readFile(t, "../examples/requests/database-first-sync.json")
				// code is the answer to the token on the route the changed file guards.
				code := func(token string) int {
					t.Helper()
					var code int
					var err error
					if role == "token" {
						code, _, err = call(freshClient(nil), http.MethodPost, srv.hookURL+"/hooks/database/sync", body, "Authorization", "Bearer "+token)
					} else {
						code, _, err = call(freshClient(nil), http.MethodGet, srv.metricsURL+"/metrics", nil, "Authorization", "Bearer "+token)
					}
					if err != nil {
						t.Fatal(err)
					}
					return code
				}
				scraper := "Bearer " + otherToken
				if role == "metrics_token" {
					scraper = "Bearer " + nextToken
				}
				success := `metahooks_config_last_reload_success{file="` + role + `"}`
				if got := scrapeMetric(t, srv.metricsURL, scraper, success); got != "1" {
					t.Errorf("at start: %s = %q, want 1", success, got)
				}
				tc.change(t, changed)
				for _, token := range tc.refused {
					eventually(t, "a refused token gets 401", func() bool { return code(token) == 401 })
				}
				for _, token := range tc.accepted {
					if got := code(token); got != 200 {
						t.Errorf("%s\na kept token = %d, want 200", tc.reason, got)
					}
				}
				if role == "metrics_token" {
					if len(tc.accepted) == 0 {
						return // nothing can scrape now; TestWatchFilesReloadMetrics covers the series
					}
					scraper = "Bearer " + tc.accepted[0]
				}
				result := map[string]string{"0": "failure", "1": "success"}[tc.wantSuccess]
				eventually(t, "the reload counted as a "+result, func() bool {
					return scrapeMetric(t, srv.metricsURL, scraper, `metahooks_config_reloads_total{file="`+role+`",result="`+result+`"}`) == "1"
				})
				if got := scrapeMetric(t, srv.metricsURL, scraper, success); got != tc.wantSuccess {
					t.Errorf("%s\n%s = %q, want %s", tc.reason, success, got, tc.wantSuccess)
				}
				for _, token := range []string{currentToken, nextToken, rotatedToken, otherToken} {
					if strings.Contains(srv.log.String(), token) {
						t.Errorf("a token reached the log:\n%s", srv.log)
					}
				}
			})
		}
	}
}

// scrapeMetric returns the value of one sample line of GET url/metrics
// sent with the Authorization header authorization ("" for none); "" when
// the series is absent.
func scrapeMetric(t *testing.T, url, authorization, series string) string {
	t.Helper()
	var header []string
	if authorization != "" {
		header = []string{"Authorization", authorization}
	}
	code, text, err := call(freshClient(nil), http.MethodGet, url+"/metrics", nil, header...)
	if err != nil || code != 200 {
		t.Fatalf("GET %s/metrics = %d %v", url, code, err)
	}
	for _, line := range strings.Split(text, "\n") {
		if value, ok := strings.CutPrefix(line, series+" "); ok {
			return value
		}
	}
	return ""
}

func removeTestFile(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
