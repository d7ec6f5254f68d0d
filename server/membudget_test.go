package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultMaxInFlight(t *testing.T) {
	const mib = 1 << 20
	cases := map[string]struct {
		reason  string
		limit   int64
		maxBody int64
		want    int
	}{
		"Deployment":   {reason: "128 MiB, 8 MiB bodies: (128-32)/(7*(8+0.14))", limit: 128 * mib, maxBody: 8 * mib, want: 1},
		"SmallBodies":  {reason: "128 MiB, 1 MiB bodies: 96/(7*1.14)", limit: 128 * mib, maxBody: 1 * mib, want: 11},
		"NoLimit":      {reason: "no limit known: sized for 256 MiB", limit: 0, maxBody: 8 * mib, want: 3},
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

func TestGCGovernor(t *testing.T) {
	var set []int
	g := &gcGovernor{raised: gcPercentWithLimit, set: func(p int) int { set = append(set, p); return 0 }}
	g.enter() // first large request: back to the default
	g.enter() // a second one: already there
	g.leave() // one still in flight
	if diff := cmp.Diff([]int{defaultGCPercent}, set); diff != "" {
		t.Errorf("while large requests are in flight, GOGC set to (-want +got):\n%s", diff)
	}
	g.leave() // the last one: raised again
	if diff := cmp.Diff([]int{defaultGCPercent, gcPercentWithLimit}, set); diff != "" {
		t.Errorf("after the last large request, GOGC set to (-want +got):\n%s", diff)
	}

	idle := &gcGovernor{set: func(int) int { t.Error("a governor whose GOGC was not raised changed it"); return 0 }}
	idle.enter()
	idle.leave()
	var none *gcGovernor
	none.enter() // no budget governor: nothing to do, and no panic
	none.leave()
}

func TestBudgetTellsGovernor(t *testing.T) {
	var set []int
	g := &gcGovernor{raised: gcPercentWithLimit, set: func(p int) int { set = append(set, p); return 0 }}
	b := newInFlightBudget(3, 8<<20, g)
	small, ok := b.tryAcquire(20 << 10)
	if !ok {
		t.Fatal("an empty budget refused a 20 KiB request")
	}
	small()
	if len(set) != 0 {
		t.Errorf("a small request changed GOGC: %v", set)
	}
	for name, contentLength := range map[string]int64{"declared large": smallShare + 1, "chunked": -1} {
		set = nil
		release, ok := b.tryAcquire(contentLength)
		if !ok {
			t.Fatalf("%s: an empty budget refused it", name)
		}
		release()
		if diff := cmp.Diff([]int{defaultGCPercent, gcPercentWithLimit}, set); diff != "" {
			t.Errorf("%s: GOGC set to (-want +got):\n%s", name, diff)
		}
	}
}
