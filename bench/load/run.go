package load

import (
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Target is the one request Run sends over and over.
type Target struct {
	Addr       string            // 127.0.0.1:port
	Path       string            // /hooks/myapp/sync
	Body       []byte            // POSTed as application/json; nil sends a GET
	Header     map[string]string // extra headers, e.g. If-None-Match
	WantStatus int               // the status every answer must have (200 when 0)
}

// Options bound one run.
type Options struct {
	Concurrency int           // connections, each with one request in flight
	Warmup      time.Duration // sent first, not measured
	Duration    time.Duration // measured
	// Rate, when > 0, spaces request starts evenly at Rate per second over
	// all connections instead of sending each as soon as the last answer came.
	Rate float64
}

// Result is what one run measured. Latencies are from writing the request to
// reading the last byte of its answer.
type Result struct {
	Requests   int           // answered with WantStatus in the measured part
	Errors     int           // connection errors and unexpected statuses
	FirstError string        // the first of them, for the report
	Elapsed    time.Duration // length of the measured part
	RPS        float64       // Requests / Elapsed
	P50, P90   time.Duration
	P99, Max   time.Duration
	Bytes      int64 // answer bytes read (status line, headers, body)
}

func (r Result) String() string {
	s := fmt.Sprintf("%.0f req/s, p50 %s, p99 %s (%d requests in %s", r.RPS, round(r.P50), round(r.P99), r.Requests, r.Elapsed.Round(time.Millisecond))
	if r.Errors > 0 {
		s += fmt.Sprintf(", %d errors, first: %s", r.Errors, r.FirstError)
	}
	return s + ")"
}

func round(d time.Duration) time.Duration {
	switch {
	case d >= 10*time.Millisecond:
		return d.Round(100 * time.Microsecond)
	case d >= 10*time.Microsecond:
		return d.Round(time.Microsecond)
	}
	return d
}

// Run drives target with opts and returns what the measured part saw. It
// fails only when it cannot send at all (no connection); answers with the
// wrong status are counted in Result.Errors.
func Run(target Target, opts Options) (Result, error) {
	if opts.Concurrency < 1 {
		opts.Concurrency = 1
	}
	if opts.Duration <= 0 {
		return Result{}, fmt.Errorf("load.Run: Duration must be positive")
	}
	if target.WantStatus == 0 {
		target.WantStatus = 200
	}
	request := target.request()
	conns := make([]*client, opts.Concurrency)
	for i := range conns {
		c, err := dial(target.Addr, request)
		if err != nil {
			for _, open := range conns[:i] {
				open.close()
			}
			return Result{}, err
		}
		conns[i] = c
	}
	defer func() {
		for _, c := range conns {
			c.close()
		}
	}()
	if opts.Warmup > 0 {
		phase(conns, target.WantStatus, opts.Warmup, opts.Rate, false)
	}
	return phase(conns, target.WantStatus, opts.Duration, opts.Rate, true), nil
}

// phase runs every connection for d and merges what they saw.
func phase(conns []*client, want int, d time.Duration, rate float64, measure bool) Result {
	type seen struct {
		latencies []time.Duration
		errors    int
		firstErr  string
		bytes     int64
	}
	var (
		wg      sync.WaitGroup
		started atomic.Int64 // request starts handed out, for Rate
		per     = make([]seen, len(conns))
	)
	start := time.Now()
	end := start.Add(d)
	var interval time.Duration
	if rate > 0 {
		interval = time.Duration(float64(time.Second) / rate)
	}
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := &per[i]
			if measure {
				s.latencies = make([]time.Duration, 0, 4096)
			}
			for {
				if interval > 0 {
					due := start.Add(time.Duration(started.Add(1)-1) * interval)
					if !due.Before(end) {
						return
					}
					if wait := time.Until(due); wait > 0 {
						time.Sleep(wait)
					}
				}
				sent := time.Now()
				if !sent.Before(end) {
					return
				}
				status, n, err := c.do()
				took := time.Since(sent)
				s.bytes += n
				switch {
				case err != nil:
					s.errors++
					if s.firstErr == "" {
						s.firstErr = err.Error()
					}
					if rerr := c.redial(); rerr != nil {
						return
					}
				case status != want:
					s.errors++
					if s.firstErr == "" {
						s.firstErr = fmt.Sprintf("status %d, want %d", status, want)
					}
				case measure:
					s.latencies = append(s.latencies, took)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	var r Result
	var all []time.Duration
	for _, s := range per {
		all = append(all, s.latencies...)
		r.Errors += s.errors
		r.Bytes += s.bytes
		if r.FirstError == "" {
			r.FirstError = s.firstErr
		}
	}
	slices.Sort(all)
	r.Requests = len(all)
	r.Elapsed = elapsed
	r.RPS = float64(r.Requests) / elapsed.Seconds()
	r.P50, r.P90, r.P99 = percentile(all, 0.50), percentile(all, 0.90), percentile(all, 0.99)
	if len(all) > 0 {
		r.Max = all[len(all)-1]
	}
	return r
}

// percentile of sorted latencies, nearest rank.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(rank, 0)]
}

// Send sends the target's request n times, one after the other on one
// keep-alive connection, and fails on the first error or answer with
// another status than Target.WantStatus: a fixed amount of work, for
// figures counted per request rather than per second.
func Send(target Target, n int) error {
	if target.WantStatus == 0 {
		target.WantStatus = 200
	}
	c, err := dial(target.Addr, target.request())
	if err != nil {
		return err
	}
	defer c.close()
	for i := range n {
		status, _, err := c.do()
		if err != nil {
			return fmt.Errorf("request %d of %d: %w", i+1, n, err)
		}
		if status != target.WantStatus {
			return fmt.Errorf("request %d of %d: status %d, want %d", i+1, n, status, target.WantStatus)
		}
	}
	return nil
}
