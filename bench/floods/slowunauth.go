package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// slowUnauth is the flood of issue 30 finding 3: n clients without valid
// credentials each hold a connection on which they send a hook request's
// header (half with a wrong bearer token, half with none) declaring a
// 256 KiB body, then one body byte a second; when the server answers or
// closes, they connect again, at once or after a second. Beside them, for
// d, an authenticated client (a keep-alive pool, as Metacontroller's)
// sends the ordinary sync at ordinaryRate. Each run has a fresh server:
// without the flood, with the flood reconnecting at once, with it
// reconnecting after a second. It reports the ordinary requests' success
// rate, throughput and latency, the server's peak RSS and CPU, and how the
// flood's connections ended. A last run sends the same flood to routes that
// read no body (a 404, a 405 on a hook route, a probe): review finding 1 of
// the second pass, where such requests were drained for the read deadline.
func slowUnauth(binary string, limit int64, ordinary []byte, n int, d time.Duration) ([]string, error) {
	var rows []string
	hook := []string{"POST /hooks/myapp/sync"}
	others := []string{"POST /nope", "PUT /hooks/myapp/sync", "GET /healthz"}
	for _, run := range []struct {
		attackers int
		pause     time.Duration
		requests  []string // request lines, one per attacker in turn
	}{{0, 0, hook}, {n, 0, hook}, {n, time.Second, hook}, {n, 0, others}} {
		attackers := run.attackers
		server, err := start(binary, limit, "100ms", nil)
		if err != nil {
			return nil, err
		}
		row, err := slowUnauthRun(server.Addr, ordinary, attackers, run.pause, run.requests, d)
		peak, peakErr := server.PeakRSS()
		cpu, cpuErr := server.CPUTime()
		_ = server.Stop()
		if err == nil {
			err = peakErr
		}
		if err == nil {
			err = cpuErr
		}
		if err != nil {
			return nil, err
		}
		name := "no flood"
		if attackers > 0 {
			name = fmt.Sprintf("%d slow, reconnect after %s", attackers, run.pause)
			if run.requests[0] != hook[0] {
				name = fmt.Sprintf("%d slow to %s, reconnect after %s", attackers, strings.Join(run.requests, ", "), run.pause)
			}
		}
		rows = append(rows, fmt.Sprintf("%s\t%.0f MiB\t%s\t%.1f s\t%s", name, float64(peak)/(1<<20), row, cpu.Seconds(), loadAverage()))
	}
	return rows, nil
}

// The authenticated client: ordinaryWorkers goroutines, each on its own
// pooled keep-alive connection, send ordinaryRate syncs a second in all,
// each at its time (a late one goes at once).
const (
	ordinaryWorkers = 4
	ordinaryRate    = 100
)

func slowUnauthRun(addr string, ordinary []byte, attackers int, pause time.Duration, requests []string, d time.Duration) (string, error) {
	client := newClient(10 * time.Second)
	defer client.CloseIdleConnections()
	// The pool is open before the flood, as Metacontroller's is.
	for range ordinaryWorkers {
		resp, err := postSync(context.Background(), client, addr, ordinary)
		if err != nil {
			return "", fmt.Errorf("the ordinary sync before the flood: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}

	stop := make(chan struct{})
	flood := &tally{}
	var floodConns atomic.Int64
	var wg sync.WaitGroup
	for i := range attackers {
		auth, line := "", requests[i%len(requests)]
		if i%2 == 0 {
			auth = "Authorization: Bearer not-a-token\r\n"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				floodConns.Add(1)
				slowRequest(addr, line, auth, stop, flood)
				select {
				case <-stop:
					return
				case <-time.After(pause):
				}
			}
		}()
	}

	begin := time.Now()
	end := begin.Add(d)
	interval := time.Second * ordinaryWorkers / ordinaryRate
	ok := &tally{}
	var mu sync.Mutex
	var latencies []time.Duration
	var workers sync.WaitGroup
	for i := range ordinaryWorkers {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for next := begin.Add(interval * time.Duration(i) / ordinaryWorkers); next.Before(end); next = next.Add(interval) {
				time.Sleep(time.Until(next))
				started := time.Now()
				resp, err := postSync(context.Background(), client, addr, ordinary)
				if err != nil {
					ok.addErr(err)
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				took := time.Since(started)
				ok.add(fmt.Sprint(resp.StatusCode))
				mu.Lock()
				latencies = append(latencies, took) // every answer, failed or not
				mu.Unlock()
			}
		}()
	}
	workers.Wait()
	close(stop)
	wg.Wait()

	slices.Sort(latencies)
	total, succeeded := 0, 0
	ok.mu.Lock()
	for k, v := range ok.counts {
		total += v
		if k == "200" {
			succeeded += v
		}
	}
	ok.mu.Unlock()
	rate := 0.0
	if total > 0 {
		rate = 100 * float64(succeeded) / float64(total)
	}
	pct := func(p float64) time.Duration {
		if len(latencies) == 0 {
			return 0
		}
		return latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Round(100 * time.Microsecond)
	}
	floodNote := "-"
	if attackers > 0 {
		floodNote = fmt.Sprintf("%d connections: %s", floodConns.Load(), flood)
	}
	return fmt.Sprintf("%d/%d (%.2f%%) %s\t%.0f/s of %d/s\tp50 %s, p99 %s, max %s\t%s",
		succeeded, total, rate, ok, float64(succeeded)/d.Seconds(), ordinaryRate, pct(0.50), pct(0.99), pct(1), floodNote), nil
}

// slowRequest sends one slow unauthenticated request (line: its method and
// path; auth: its Authorization header line, or "") and tallies how it ended: the status,
// or the error, once the server answered and closed, or the flood stopped.
func slowRequest(addr, line, auth string, stop <-chan struct{}, t *tally) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.addErr(err)
		time.Sleep(100 * time.Millisecond) // no busy loop on a refused port
		return
	}
	defer conn.Close()
	if _, err := fmt.Fprintf(conn, "%s HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n", line, auth, 256<<10); err != nil {
		t.addErr(err)
		return
	}
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	ended := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		writing := true
		for {
			select {
			case <-ended:
				return
			case <-stop:
				conn.Close()
				return
			case <-tick.C:
				if writing {
					_, err := conn.Write([]byte(" "))
					writing = err == nil
				}
			}
		}
	}()
	defer close(ended)
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		select {
		case <-stop:
		default:
			t.addErr(err)
		}
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// Then the server closes; a client reading on sees EOF or a reset.
	_, err = r.ReadByte()
	switch {
	case err == nil:
		t.add(fmt.Sprintf("%d, kept open", resp.StatusCode))
	default:
		t.add(fmt.Sprintf("%d then %s", resp.StatusCode, errorKind(err)))
	}
}

// loadAverage is the machine's 1-minute load average now.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}
