package main

import (
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The memory budget behind the default --max-in-flight (README "Memory
// budget"): a hook request of B body bytes needs about decodeOverhead × B
// while it is decoded and answered (BenchmarkHTTPLargeRequest: 14.0 MB for a
// 4 MiB body, 3.5×, rounded up), and the process needs memoryReserve besides
// (runtime, code, --max-connections buffers, metrics). So
//
//	max-in-flight = (memory limit − memoryReserve) / (decodeOverhead × max-body-bytes)
//
// which is (128 MiB − 32 MiB) / (4 × 8 MiB) = 3 in the shipped Deployment.
const (
	decodeOverhead = 4
	memoryReserve  = 32 << 20
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
	n := (limit - memoryReserve) / (decodeOverhead * maxBodyBytes)
	return int(max(1, min(n, 1<<20)))
}

// describeBudget is the startup log's account of the budget.
func describeBudget(maxInFlight int, limit int64, source string, maxBodyBytes int64) string {
	return fmt.Sprintf("%d requests of up to %d bytes (memory limit %d from %s, reserve %d, decode overhead %dx)",
		maxInFlight, maxBodyBytes, limit, source, memoryReserve, decodeOverhead)
}
