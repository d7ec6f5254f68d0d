package main

import "testing"

func TestDefaultMaxInFlight(t *testing.T) {
	const mib = 1 << 20
	cases := map[string]struct {
		reason  string
		limit   int64
		maxBody int64
		want    int
	}{
		"Deployment":   {reason: "128 MiB, 8 MiB bodies: (128-32)/(4*8)", limit: 128 * mib, maxBody: 8 * mib, want: 3},
		"SmallBodies":  {reason: "128 MiB, 1 MiB bodies", limit: 128 * mib, maxBody: 1 * mib, want: 24},
		"NoLimit":      {reason: "no limit known: sized for 256 MiB", limit: 0, maxBody: 8 * mib, want: 7},
		"TooTight":     {reason: "never below one", limit: 40 * mib, maxBody: 8 * mib, want: 1},
		"UnderReserve": {reason: "a limit below the reserve still serves one", limit: 16 * mib, maxBody: 8 * mib, want: 1},
	}
	for name, tc := range cases {
		if got := defaultMaxInFlight(tc.limit, tc.maxBody); got != tc.want {
			t.Errorf("%s (%s): defaultMaxInFlight = %d, want %d", name, tc.reason, got, tc.want)
		}
	}
}

func TestGCSettings(t *testing.T) {
	const mib = 1 << 20
	cases := map[string]struct {
		reason        string
		gogcSet       bool
		limit         int64
		source        string
		wantPercent   int
		wantSoftLimit int64
	}{
		"Deployment":   {reason: "GOMEMLIMIT from limits.memory: GOGC raised, the limit left as set", limit: 128 * mib, source: "GOMEMLIMIT", wantPercent: gcPercentWithLimit},
		"CgroupOnly":   {reason: "only the cgroup's limit: GOGC raised and a soft limit below it", limit: 100 * mib, source: "cgroup memory.max", wantPercent: gcPercentWithLimit, wantSoftLimit: 90 * mib},
		"NoLimit":      {reason: "no limit known: nothing bounds a larger heap, so nothing changes", source: "none"},
		"GOGCOverride": {reason: "an operator's GOGC always wins", gogcSet: true, limit: 128 * mib, source: "GOMEMLIMIT"},
	}
	for name, tc := range cases {
		percent, softLimit, why := gcSettings(tc.gogcSet, tc.limit, tc.source)
		if percent != tc.wantPercent || softLimit != tc.wantSoftLimit {
			t.Errorf("%s (%s): gcSettings = %d, %d, want %d, %d", name, tc.reason, percent, softLimit, tc.wantPercent, tc.wantSoftLimit)
		}
		if why == "" {
			t.Errorf("%s (%s): no description for the startup log", name, tc.reason)
		}
	}
}
