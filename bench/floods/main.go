// Command floods is the flood benchmark of `make bench` (issue 8): it starts
// the real metahooks binary on a loopback port with the Deployment's
// GOMEMLIMIT (deploy/deployment.yaml limits.memory), floods it the ways a
// hostile or unlucky caller would, and reports for each flood the server's
// peak RSS (VmHWM), how the flood's requests were answered, an ordinary
// sync's latency during the flood, and the resets clients saw. The floods
// of the metrics listener (--metrics-addr, issue 30) report beside it a
// scraper's GET /metrics too.
//
//	go build -o bin/metahooks ./server
//	go run ./bench/floods -metahooks bin/metahooks
//
// Every flood is bounded in count and time, and talks to 127.0.0.1 only.
// Each flood gets a fresh server process, so each VmHWM is that flood's.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"metahooks/bench/load"
)

type config struct {
	binary     string
	label      string
	request    string // the ordinary sync
	deployment string
	only       string
	idle       int
	slow       int
	slowFor    time.Duration
	// metricsIdle and metricsToken are the metrics floods': the
	// connections of metrics-idle, and whether the metrics listener asks
	// for a bearer token (where the binary takes --metrics-auth-token-file).
	metricsIdle  int
	metricsToken bool
}

func main() {
	var cfg config
	flag.StringVar(&cfg.binary, "metahooks", "bin/metahooks", "metahooks binary to flood")
	flag.StringVar(&cfg.label, "label", "", "name of the binary in the report")
	flag.StringVar(&cfg.request, "request", "server/testdata/metacontroller/sync-03-children-with-status.json", "the ordinary sync request, and the base of the large ones")
	flag.StringVar(&cfg.deployment, "deployment", "deploy/deployment.yaml", "the Deployment whose memory limit is GOMEMLIMIT")
	flag.StringVar(&cfg.only, "only", "", "run only the floods whose name contains this")
	flag.IntVar(&cfg.idle, "idle", 6000, "idle keep-alive connections of the idle flood")
	flag.IntVar(&cfg.slow, "slow", 1500, "connections of the slow unauthenticated flood (slow-unauth)")
	flag.DurationVar(&cfg.slowFor, "slow-for", 30*time.Second, "how long slow-unauth runs, without the flood and then with it")
	flag.IntVar(&cfg.metricsIdle, "metrics-idle", 6000, "keep-alive connections of the metrics-idle flood")
	flag.BoolVar(&cfg.metricsToken, "metrics-token", false, "metrics floods: GET /metrics asks for a bearer token (--metrics-auth-token-file; the scraper sends it, the flood does not), where the binary takes one; off, as deploy/deployment.yaml ships")
	flag.Parse()
	if cfg.label == "" {
		cfg.label = cfg.binary
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "floods:", err)
		os.Exit(1)
	}
}

// flood is one scenario: it drives the server at addr (the hook listener's,
// or for metricsFloods the metrics listener's) and returns how its requests
// were answered.
type flood struct {
	name  string
	what  string
	drive func(addr string) *tally
}

func run(cfg config) (err error) {
	if tokenDir, err = os.MkdirTemp("", "floods-"); err != nil {
		return err
	}
	defer os.RemoveAll(tokenDir)
	limit, err := load.DeploymentMemoryLimit(cfg.deployment)
	if err != nil {
		return err
	}
	ordinary, err := os.ReadFile(cfg.request)
	if err != nil {
		return err
	}
	ordinary = compact(ordinary)
	valid75 := inflate(ordinary, 7<<20+512<<10)
	valid8 := inflate(ordinary, 8<<20-4<<10)
	huge := bytes.Repeat([]byte(" "), 16<<20)
	floods := []flood{
		{"valid-7.5MiB", "16 clients POST valid 7.5 MiB syncs for 10 s", func(addr string) *tally { return posts(addr, valid75, 16, 10*time.Second) }},
		{"valid-8MiB", "16 clients POST valid 8 MiB syncs (the limit) for 5 s", func(addr string) *tally { return posts(addr, valid8, 16, 5*time.Second) }},
		{"over-16MiB", "16 clients POST 16 MiB bodies (over the limit) for 5 s", func(addr string) *tally { return posts(addr, huge, 16, 5*time.Second) }},
		{"declared-64MiB", "16 requests declare Content-Length 64 MiB and send 64 KiB; wait up to 12 s", func(addr string) *tally { return declared(addr, 16, 64<<20, 64<<10, 12*time.Second) }},
		{"trickle", "16 clients trickle a 1 MiB body, 1 byte per 200 ms; wait up to 35 s", func(addr string) *tally { return trickle(addr, 16, 35*time.Second) }},
		{"idle", fmt.Sprintf("%d idle keep-alive connections, held 5 s", cfg.idle), func(addr string) *tally { return idle(addr, "/healthz", cfg.idle, 5*time.Second) }},
	}
	metricsFloods := []flood{
		{"metrics-idle", fmt.Sprintf("%d keep-alive connections to the metrics listener, each after one GET /metrics without a token, held 5 s", cfg.metricsIdle), func(addr string) *tally { return idle(addr, "/metrics", cfg.metricsIdle, 5*time.Second) }},
		{"metrics-headers", fmt.Sprintf("%d clients send GET /metrics with %d bytes of headers, without a token, again after each answer (on a new connection when closed), for 5 s", headerClients, headerBytes), func(addr string) *tally {
			return bigHeaders(addr, "/metrics", headerClients, headerBytes, 5*time.Second)
		}},
	}
	fmt.Printf("floods of %s, GOMEMLIMIT=%d (%s limits.memory); %s\n\n", cfg.label, limit, cfg.deployment, loadNote())
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	for _, table := range []struct {
		header  string
		floods  []flood
		metrics *config // the metrics floods' configuration; nil: the hook listener's floods
	}{
		{"flood\tpeak RSS\tflood answered\tordinary sync during it\tresets", floods, nil},
		{"metrics flood\tpeak RSS\tflood's connections\tordinary sync during it\tscrape during it\tresets (sync, scrape)\tload", metricsFloods, &cfg},
	} {
		header := false
		for _, f := range table.floods {
			if cfg.only != "" && !strings.Contains(f.name, cfg.only) {
				continue
			}
			if !header {
				fmt.Fprintln(w, table.header)
				header = true
			}
			row, err := measure(cfg.binary, limit, ordinary, f, table.metrics)
			if err != nil {
				return fmt.Errorf("%s: %w", f.name, err)
			}
			fmt.Fprintln(w, row)
			w.Flush()
		}
		if header {
			fmt.Println()
		}
	}
	if cfg.only == "" || strings.Contains("slow-unauth", cfg.only) {
		rows, err := slowUnauth(cfg.binary, limit, ordinary, cfg.slow, cfg.slowFor)
		if err != nil {
			return fmt.Errorf("slow-unauth: %w", err)
		}
		fmt.Fprintln(w, "slow-unauth\tpeak RSS\tordinary syncs answered 200\tthroughput\tlatency\tflood's connections\tserver CPU\tload")
		for _, row := range rows {
			fmt.Fprintln(w, row)
		}
		w.Flush()
		fmt.Println()
	}
	if cfg.only == "" || strings.Contains("shutdown", cfg.only) {
		row, err := shutdown(cfg.binary, limit, ordinary)
		if err != nil {
			return fmt.Errorf("shutdown: %w", err)
		}
		fmt.Fprintln(w, row)
	}
	w.Flush()
	fmt.Println()
	for _, f := range append(floods, metricsFloods...) {
		fmt.Printf("  %s: %s\n", f.name, f.what)
	}
	fmt.Printf("  metrics floods: the metrics listener on a port of its own; beside the ordinary sync, a scraper GETs /metrics every 100 ms on a keep-alive connection%s\n",
		map[bool]string{true: " with the bearer token where the binary asks for one (-metrics-token)", false: " (no token: -metrics-token=false)"}[cfg.metricsToken])
	fmt.Printf("  slow-unauth: %d clients without valid credentials (half a wrong token, half none) each declare a 256 KiB body and send a byte a second, reconnecting at once (or after 1 s) when closed, while %d authenticated keep-alive workers send %d ordinary syncs a second for %s; a fresh server without them, with them reconnecting at once, after 1 s, and with them sent to routes that read no body (POST /nope, PUT /hooks/myapp/sync, GET /healthz)\n", cfg.slow, ordinaryWorkers, ordinaryRate, cfg.slowFor)
	fmt.Println("  shutdown: 8 keep-alive clients send syncs throughout a SIGTERM (--shutdown-delay 2s --shutdown-grace 5s)")
	return nil
}

// measure runs one flood against a fresh server with an ordinary sync every
// 100 ms beside it. With metrics (a flood of metricsFloods) the server has
// its metrics listener, the flood drives that, and a scraper GETs /metrics
// every 100 ms beside the sync.
func measure(binary string, limit int64, ordinary []byte, f flood, metrics *config) (string, error) {
	server, err := start(binary, limit, "100ms", metrics)
	if err != nil {
		return "", err
	}
	defer server.Stop()
	var scraper *probe
	probe := startProbe(server.Addr, ordinary)
	target := server.Addr
	if metrics != nil {
		target = server.metricsAddr
		scraper = startScrape(server.metricsAddr)
	}
	result := f.drive(target)
	probed := probe.stop()
	peak, err := server.PeakRSS()
	if err != nil {
		return "", err
	}
	if scraper == nil {
		return fmt.Sprintf("%s\t%.0f MiB\t%s\t%s\t%d", f.name, float64(peak)/(1<<20), result, probed, result.resets()+probed.tally.resets()), nil
	}
	scraped := scraper.stop()
	return fmt.Sprintf("%s\t%.0f MiB\t%s\t%s\t%s\t%d, %d\t%s", f.name, float64(peak)/(1<<20), result, probed, scraped,
		probed.tally.resets(), scraped.tally.resets(), loadAverage()), nil
}

// authorization is the Authorization header every hook request carries
// ("" for a binary that does not authenticate).
var authorization string

// tokenDir holds the token file of the server under test, for the whole run
// (the server re-reads it while it runs).
var tokenDir string

// scrapeAuthorization is the Authorization header of the scraper's GET
// /metrics ("" when the metrics listener asks for none).
var scrapeAuthorization string

// server is a metahooks process under test; metricsAddr is its metrics
// listener's address, "" when it has none.
type server struct {
	*load.Server
	metricsAddr string
}

// start starts the binary on a free port; with metrics (the metrics
// floods' configuration), its metrics listener on another.
func start(binary string, limit int64, delay string, metrics *config) (*server, error) {
	addr, err := load.FreeAddr()
	if err != nil {
		return nil, err
	}
	args := []string{binary, "serve", "--addr", addr, "--shutdown-delay", delay, "--shutdown-grace", "5s", "--log-level", "error"}
	extra, auth, err := load.ServeFlags(binary, tokenDir)
	if err != nil {
		return nil, err
	}
	authorization = auth
	args = append(args, extra...)
	metricsAddr := ""
	if metrics != nil {
		if metricsAddr, err = load.FreeAddr(); err != nil {
			return nil, err
		}
		extra, auth, err := load.MetricsFlags(binary, tokenDir, metricsAddr, metrics.metricsToken)
		if err != nil {
			return nil, err
		}
		scrapeAuthorization = auth
		args = append(args, extra...)
	}
	s, err := load.Start("metahooks", args, []string{fmt.Sprintf("GOMEMLIMIT=%d", limit)}, addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	if metricsAddr != "" {
		if err := awaitListener(metricsAddr, 5*time.Second); err != nil {
			_ = s.Stop()
			return nil, err
		}
	}
	return &server{Server: s, metricsAddr: metricsAddr}, nil
}

// awaitListener waits until addr accepts a connection.
func awaitListener(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			return c.Close()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the metrics listener %s did not accept within %s: %w", addr, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// postSync POSTs body to the MyApp sync hook.
func postSync(ctx context.Context, client *http.Client, addr string, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/hooks/myapp/sync", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	return client.Do(req)
}

func loadNote() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	return "load average " + strings.Join(strings.Fields(string(raw))[:3], " ") + " at start"
}

func compact(raw []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, raw) != nil {
		return raw
	}
	return out.Bytes()
}

// inflate makes a valid sync request of about size bytes: the ordinary one
// with managedFields entries added to the parent, as a parent edited by many
// field managers carries them.
func inflate(request []byte, size int) []byte {
	var req map[string]any
	if err := json.Unmarshal(request, &req); err != nil {
		panic(err)
	}
	parent := req["parent"].(map[string]any)
	meta := parent["metadata"].(map[string]any)
	fields := map[string]any{}
	for i := range 64 {
		fields[fmt.Sprintf("f:example.com/annotation-%03d", i)] = map[string]any{}
	}
	entry := map[string]any{"manager": "bench", "operation": "Update", "apiVersion": "example.com/v1alpha1",
		"time": "2026-11-30T05:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:metadata": map[string]any{"f:annotations": fields}}}
	one, _ := json.Marshal(entry)
	var managed []any
	for n := len(request); n+len(one)+1 < size; n += len(one) + 1 {
		managed = append(managed, entry)
	}
	meta["managedFields"] = managed
	out, err := json.Marshal(req)
	if err != nil {
		panic(err)
	}
	if len(out) < size {
		meta["annotations"] = map[string]any{"bench/padding": strings.Repeat("x", size-len(out)-len(`,"annotations":{"bench/padding":""}`))}
		out, _ = json.Marshal(req)
	}
	return out
}

// tally counts answers: HTTP status codes, and errors by kind.
type tally struct {
	mu     sync.Mutex
	counts map[string]int
}

func (t *tally) add(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[string]int{}
	}
	t.counts[key]++
}

func (t *tally) addErr(err error) { t.add(errorKind(err)) }

func (t *tally) resets() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for k, v := range t.counts {
		if strings.HasPrefix(k, "reset") || strings.HasPrefix(k, "EOF") || k == "broken pipe" {
			n += v
		}
	}
	return n
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.counts))
	for k := range t.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d×%s", t.counts[k], k))
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " ")
}

func errorKind(err error) string {
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &opErr) && opErr.Op == "dial" && errors.Is(err, syscall.ECONNRESET):
		// The handshake completed and the server reset the connection
		// before the client's connect returned (a connection in the
		// listen backlog when the listener closed): nothing was sent, but
		// unlike refused it is a reset.
		return "reset in connect"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), strings.Contains(err.Error(), "EOF"):
		return "EOF"
	case errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	default:
		return "error"
	}
}

func newClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
}

// posts has clients POST body in a loop for d.
func posts(addr string, body []byte, clients int, d time.Duration) *tally {
	t := &tally{}
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	client := newClient(15 * time.Second)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				resp, err := postSync(context.Background(), client, addr, body)
				if err != nil {
					t.addErr(err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				t.add(fmt.Sprint(resp.StatusCode))
				if resp.StatusCode == http.StatusTooManyRequests {
					time.Sleep(100 * time.Millisecond) // a tenth of Retry-After, to keep the flood on
				}
			}
		}()
	}
	wg.Wait()
	client.CloseIdleConnections()
	return t
}

// declared sends requests whose header declares length bytes but sends only
// part of them, and waits up to wait for each answer.
func declared(addr string, n int, length, part int, wait time.Duration) *tally {
	return rawRequests(addr, n, length, bytes.Repeat([]byte(" "), part), 0, wait, 10*time.Millisecond)
}

// trickle sends a 1 MiB request's body one byte per 200 ms until answered.
func trickle(addr string, n int, wait time.Duration) *tally {
	return rawRequests(addr, n, 1<<20, nil, 200*time.Millisecond, wait, 100*time.Millisecond)
}

// rawRequests sends n rawRequests at once and tallies their answers and the
// slowest one, rounded to round.
func rawRequests(addr string, n, length int, body []byte, interval, wait, round time.Duration) *tally {
	t := &tally{}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			code, err := rawRequest(addr, length, body, interval, wait)
			mu.Lock()
			slowest = max(slowest, time.Since(start))
			mu.Unlock()
			if err != nil {
				t.addErr(err)
				return
			}
			t.add(fmt.Sprint(code))
		}()
	}
	wg.Wait()
	t.add(fmt.Sprintf("(slowest %s)", slowest.Round(round)))
	return t
}

// rawRequest writes a hook request header declaring length, then part, then
// (every > 0) one more byte per every until answered; it returns the status.
func rawRequest(addr string, length int, part []byte, every, wait time.Duration) (int, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	deadline := time.Now().Add(wait)
	_ = conn.SetDeadline(deadline)
	auth := ""
	if authorization != "" {
		auth = "Authorization: " + authorization + "\r\n"
	}
	if _, err := fmt.Fprintf(conn, "POST /hooks/myapp/sync HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n", auth, length); err != nil {
		return 0, err
	}
	if len(part) > 0 {
		if _, err := conn.Write(part); err != nil {
			return 0, err
		}
	}
	answered := make(chan struct{})
	if every > 0 {
		go func() {
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-answered:
					return
				case <-tick.C:
					if _, err := conn.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	close(answered)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// idle opens n keep-alive connections, each after one GET path without
// credentials, holds them for hold, and counts how many the server closed
// meanwhile.
func idle(addr, path string, n int, hold time.Duration) *tally {
	t := &tally{}
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var readers []*bufio.Reader
	for range n {
		conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			t.addErr(err)
			continue
		}
		_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
		r := bufio.NewReader(conn)
		if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: bench\r\n\r\n"); err != nil {
			t.addErr(err)
			conn.Close()
			continue
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.addErr(err)
			conn.Close()
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		t.add(fmt.Sprint(resp.StatusCode))
		conns = append(conns, conn)
		readers = append(readers, r)
	}
	time.Sleep(hold)
	closed := 0
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := readers[i].ReadByte(); err != nil && !isTimeout(err) {
			closed++
		}
	}
	t.add(fmt.Sprintf("(%d of %d held closed by the server)", closed, len(conns)))
	return t
}

func isTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// probe sends a request every 100 ms over a keep-alive client: the
// ordinary sync (startProbe), or a scraper's GET /metrics (startScrape).
type probe struct {
	stopCh    chan struct{}
	done      chan struct{}
	tally     tally
	latencies []time.Duration
	conns     int // connections it opened
}

func startProbe(addr string, body []byte) *probe {
	return startProbing(func(ctx context.Context, client *http.Client) (*http.Response, error) {
		return postSync(ctx, client, addr, body)
	})
}

// startScrape GETs /metrics as Prometheus does, with scrapeAuthorization.
func startScrape(addr string) *probe {
	return startProbing(func(ctx context.Context, client *http.Client) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		if scrapeAuthorization != "" {
			req.Header.Set("Authorization", scrapeAuthorization)
		}
		return client.Do(req)
	})
}

func startProbing(send func(context.Context, *http.Client) (*http.Response, error)) *probe {
	p := &probe{stopCh: make(chan struct{}), done: make(chan struct{})}
	client := newClient(10 * time.Second)
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if !info.Reused {
			p.conns++ // one request at a time: no lock needed
		}
	}}
	ctx := httptrace.WithClientTrace(context.Background(), trace)
	go func() {
		defer close(p.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for first := true; ; first = false {
			if !first {
				select {
				case <-p.stopCh:
					return
				case <-tick.C:
				}
			}
			start := time.Now()
			resp, err := send(ctx, client)
			if err != nil {
				p.tally.addErr(err)
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			p.tally.add(fmt.Sprint(resp.StatusCode))
			if resp.StatusCode == http.StatusOK {
				p.latencies = append(p.latencies, time.Since(start))
			}
		}
	}()
	return p
}

type probed struct {
	tally     *tally
	latencies []time.Duration
	conns     int
}

func (p *probe) stop() probed {
	close(p.stopCh)
	<-p.done
	return probed{tally: &p.tally, latencies: p.latencies, conns: p.conns}
}

func (p probed) String() string {
	conns := fmt.Sprintf("; %d connections", p.conns)
	if p.conns == 1 {
		conns = "; 1 connection"
	}
	if len(p.latencies) == 0 {
		return "no 200 (" + p.tally.String() + conns + ")"
	}
	l := slices.Clone(p.latencies)
	slices.Sort(l)
	pct := func(q float64) time.Duration { return l[min(len(l)-1, int(q*float64(len(l))))].Round(time.Millisecond) }
	return fmt.Sprintf("p50 %s, p99 %s, max %s (%s%s)", pct(0.50), pct(0.99), l[len(l)-1].Round(time.Millisecond), p.tally.String(), conns)
}

// shutdown sends SIGTERM while 8 keep-alive clients send syncs, and counts
// how their requests ended until the process exited.
func shutdown(binary string, limit int64, body []byte) (string, error) {
	server, err := start(binary, limit, "2s", nil)
	if err != nil {
		return "", err
	}
	t := &tally{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := newClient(10 * time.Second)
			for {
				select {
				case <-stop:
					return
				default:
				}
				reused := false
				trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
				resp, err := postSync(httptrace.WithClientTrace(context.Background(), trace), client, server.Addr, body)
				if err != nil {
					kind := errorKind(err)
					if kind == "reset" || kind == "EOF" {
						// A new connection reset was still in the listen
						// backlog when the listener closed (the server never
						// accepted it); a reused one was cut by the server.
						kind += map[bool]string{true: " (reused connection)", false: " (new connection)"}[reused]
					}
					t.add(kind)
					time.Sleep(5 * time.Millisecond)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				t.add(fmt.Sprint(resp.StatusCode))
				time.Sleep(5 * time.Millisecond)
			}
		}()
	}
	time.Sleep(time.Second)
	stopErr := server.Stop() // SIGTERM, then waits for the exit
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	note := ""
	if stopErr != nil {
		note = " (" + stopErr.Error() + ")"
	}
	return fmt.Sprintf("shutdown\t-\t%s%s\t-\t%d", t, note, t.resets()), nil
}
