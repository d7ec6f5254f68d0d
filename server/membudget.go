package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"metahooks/hooks/composite"
)

// The memory budget behind the default --max-in-flight (README "Memory
// budget"). A hook request of B body bytes may take, before it is
// answered or refused 413, its decode budget (composite: 4 × B + 1 MiB)
// and three copies of its body (read, decoded strings, answer): at most
// decodeOverhead × (B + slackShare), which TestDecodeCostBoundsAllocation
// holds for the costliest shapes (real requests take about 1 × B:
// BenchmarkHTTPLargeRequest, 4.1 MB for a 4 MiB body). The process needs
// memoryReserve besides (runtime, code, --max-connections buffers, metrics,
// the small requests' reserve). So
//
//	max-in-flight = (memory limit − memoryReserve) / (decodeOverhead × (max-body-bytes + slackShare))
//
// which is (128 MiB − 32 MiB) / (7 × 8.14 MiB) = 1 in the shipped Deployment.
const (
	decodeOverhead = composite.DecodeBudgetPerByte + bodyCopies
	// bodyCopies are the copies of a body a request holds: the read
	// buffer, the decoded strings, the answer.
	bodyCopies    = 3
	memoryReserve = 32 << 20
	// assumedMemory stands in for the limit when none is set (a laptop).
	assumedMemory = 256 << 20
)

// memoryLimit is the process's memory limit: GOMEMLIMIT (the Deployment sets
// it from limits.memory) or else the cgroup v2 memory.max; 0 when neither.
func memoryLimit() (int64, string) {
	if limit := debug.SetMemoryLimit(-1); limit > 0 && limit < math.MaxInt64 {
		return limit, "GOMEMLIMIT"
	}
	raw, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err == nil {
		if limit, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil && limit > 0 {
			return limit, "cgroup memory.max"
		}
	}
	return 0, "none"
}

// defaultMaxInFlight sizes the in-flight budget to the memory limit (0: not
// known, then assumedMemory). It is at least 1.
func defaultMaxInFlight(limit, maxBodyBytes int64) int {
	if limit <= 0 {
		limit = assumedMemory
	}
	n := (limit - memoryReserve) / (decodeOverhead * (maxBodyBytes + slackShare))
	return int(max(1, min(n, 1<<20)))
}

// describeBudget is the startup log's account of the budget.
func describeBudget(maxInFlight int, limit int64, source string, maxBodyBytes int64) string {
	return fmt.Sprintf("%d requests of up to %d bytes (memory limit %d from %s, reserve %d, decode overhead %dx)",
		maxInFlight, maxBodyBytes, limit, source, memoryReserve, decodeOverhead)
}

// gcPercentWithLimit is the GOGC the server runs with when it knows its memory
// limit and GOGC is not set. A hook's live heap is small (a few MiB besides
// the requests in flight), so the default GOGC of 100 collects after every
// few MiB allocated: its mark workers were 7.8% of the server's CPU under
// load. 400 lets the heap grow to five times the live heap between cycles
// and served 25-48% more MyApp syncs a second (two rounds, 3,328 and 4,111
// req/s at 100 against 4,917 and 5,151 at 400: BENCHMARKS.md, "Issue 9,
// third pass"); gcGovernor keeps large requests under the memory limit.
const gcPercentWithLimit = 400

// gcSettings decides the collector's settings: the GOGC to set (0: leave the
// runtime's) and the soft memory limit to set (0: leave it), from whether
// GOGC is in the environment and the memory limit memoryLimit found.
// Without a known limit GOGC stays at its default, so a laptop run without
// limits never holds five times its live heap. A limit found only in the
// cgroup becomes the soft limit at 90%, leaving room for what the runtime
// does not count (thread stacks, fragmentation) below the cgroup's OOM kill.
func gcSettings(gogcSet bool, limit int64, source string) (percent int, softLimit int64, why string) {
	switch {
	case gogcSet:
		return 0, 0, "GOGC from the environment"
	case limit <= 0:
		return 0, 0, "GOGC 100: no memory limit known"
	case source != "GOMEMLIMIT":
		soft := limit / 10 * 9
		return gcPercentWithLimit, soft, fmt.Sprintf("GOGC %d, soft memory limit %d (90%% of %s)", gcPercentWithLimit, soft, source)
	}
	return gcPercentWithLimit, 0, fmt.Sprintf("GOGC %d under GOMEMLIMIT %d", gcPercentWithLimit, limit)
}

// tuneGC applies gcSettings to the runtime and says what it chose. The
// governor it returns puts GOGC back to 100 while a large request is in
// flight (it does nothing when GOGC was left alone).
func tuneGC(limit int64, source string) (*gcGovernor, string) {
	_, gogcSet := os.LookupEnv("GOGC")
	percent, softLimit, why := gcSettings(gogcSet, limit, source)
	if softLimit > 0 {
		debug.SetMemoryLimit(softLimit)
	}
	if percent > 0 {
		debug.SetGCPercent(percent)
	}
	return &gcGovernor{raised: percent, set: debug.SetGCPercent}, why
}

// gcGovernor keeps the raised GOGC for small requests only. A request larger
// than smallShare (up to --max-body-bytes) holds several times its body
// while it is decoded, and with GOGC 400 the heap would grow past the memory
// limit before the collector caught up: the 7.5 MiB flood of bench/floods
// peaked at 143 MiB RSS under a 128 MiB GOMEMLIMIT. So while any large
// request is in flight GOGC is 100 (the same flood then peaked at 91-94
// MiB), and it goes back up when the last one is done.
type gcGovernor struct {
	raised int           // GOGC while no large request is in flight; 0: do nothing
	set    func(int) int // debug.SetGCPercent
	mu     sync.Mutex    // orders the changes of large with their set calls
	large  int           // large requests in flight
}

// enter marks a large request in flight; leave, its end.
func (g *gcGovernor) enter() {
	if g == nil || g.raised == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.large++; g.large == 1 {
		g.set(defaultGCPercent)
	}
}

func (g *gcGovernor) leave() {
	if g == nil || g.raised == 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.large--; g.large == 0 {
		g.set(g.raised)
	}
}

// defaultGCPercent is the runtime's own GOGC.
const defaultGCPercent = 100
