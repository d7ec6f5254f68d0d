package main

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"metahooks/bench/load"
)

func aRound(rps float64, p99 time.Duration, cpu time.Duration) measured {
	return measured{Result: load.Result{RPS: rps, P99: p99}, cpuPerRequest: cpu}
}

func TestPerRound(t *testing.T) {
	hook := &scenario{rounds: []measured{aRound(100, 0, 200), aRound(300, 0, 200), aRound(200, 0, 100)}}
	floor := &scenario{rounds: []measured{aRound(1000, 0, 50), aRound(600, 0, 50), aRound(400, 0, 50)}}
	for _, tc := range []struct {
		reason string
		f      func(a, b measured) float64
		want   spread
	}{
		{"requests/s ratios of each round (0.10, 0.50, 0.50), not of the scenarios' medians (200/600)", rpsRatio, spread{median: 0.5, min: 0.10, max: 0.50}},
		{"CPU ratios: the floor's CPU per request over the hook's, each round", cpuRatio, spread{median: 0.25, min: 0.25, max: 0.5}},
	} {
		if diff := cmp.Diff(tc.want, perRound(hook, floor, tc.f), cmp.AllowUnexported(spread{})); diff != "" {
			t.Errorf("%s: perRound (-want +got):\n%s", tc.reason, diff)
		}
	}
}

func TestPerRoundOnlyPairsRoundsBothHave(t *testing.T) {
	a := &scenario{rounds: []measured{aRound(100, 0, 1), aRound(400, 0, 1)}}
	b := &scenario{rounds: []measured{aRound(1000, 0, 1)}}
	if got, want := perRound(a, b, rpsRatio), (spread{median: 0.1, min: 0.1, max: 0.1}); got != want {
		t.Errorf("perRound with 2 and 1 rounds = %+v, want %+v (the first round only)", got, want)
	}
}

func TestShown(t *testing.T) {
	rounds := []measured{aRound(500, 9*time.Millisecond, 1), aRound(300, 3*time.Millisecond, 1), aRound(400, 5*time.Millisecond, 1), aRound(200, 7*time.Millisecond, 1)}
	for _, tc := range []struct {
		reason    string
		fixedRate bool
		want      measured
	}{
		{"as fast as it answers: the lower middle round by requests/s", false, rounds[1]},
		{"at a fixed rate: the lower middle round by p99", true, rounds[2]},
	} {
		s := &scenario{rounds: rounds, fixedRate: tc.fixedRate}
		if got := s.shown(); got != tc.want {
			t.Errorf("%s: shown = %+v, want %+v", tc.reason, got, tc.want)
		}
	}
}

func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		reason  string
		figures []figure
		want    spread
	}{
		{"no figures", nil, spread{}},
		{"odd count: the middle one, with the stolen share of its own run", []figure{{3, 0.3}, {1, 0.1}, {2, 0.2}}, spread{median: 2, min: 1, max: 3, stolen: 0.2}},
		{"even count: the lower middle one, as median takes it", []figure{{4, 0}, {1, 0}, {3, 0}, {2, 0.02}}, spread{median: 2, min: 1, max: 4, stolen: 0.02}},
		{"a round without requests (NaN, +Inf) is left out, not taken as the least", []figure{{math.NaN(), 0}, {3, 0}, {math.Inf(1), 0}, {1, 0}, {2, 0}}, spread{median: 2, min: 1, max: 3}},
	} {
		if got := spreadOf(tc.figures); got != tc.want {
			t.Errorf("%s: spreadOf(%v) = %+v, want %+v", tc.reason, tc.figures, got, tc.want)
		}
	}
}

func TestPerRoundStolenIsTheWorseOfThePair(t *testing.T) {
	hook := &scenario{rounds: []measured{{Result: load.Result{RPS: 100}, steal: 0.01}, {Result: load.Result{RPS: 300}, steal: 0.02}, {Result: load.Result{RPS: 200}, steal: 0.01}}}
	floor := &scenario{rounds: []measured{{Result: load.Result{RPS: 1000}, steal: 0.03}, {Result: load.Result{RPS: 1000}, steal: 0.30}, {Result: load.Result{RPS: 1000}, steal: 0.04}}}
	// Ratios 0.1, 0.3, 0.2: the median is round 3's, where the floor lost 4%.
	if got := perRound(hook, floor, rpsRatio).stolen; got != 0.04 {
		t.Errorf("perRound stolen = %v, want 0.04 (the floor's, in the round of the median ratio)", got)
	}
}

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		reason string
		ok     bool
		stolen float64
		want   string
	}{
		{"met on a quiet host", true, 0.01, "met"},
		{"not met on a quiet host", false, 0.05, "NOT MET"},
		{"met while the host took over 5%: no verdict", true, 0.365, "UNSURE"},
		{"not met while the host took over 5%: no verdict either", false, 0.06, "UNSURE"},
	} {
		if got := judge(tc.ok, tc.stolen); got != tc.want {
			t.Errorf("%s: judge(%v, %v) = %q, want %q", tc.reason, tc.ok, tc.stolen, got, tc.want)
		}
	}
}

func TestInRoundOrder(t *testing.T) {
	a, b, c := &scenario{name: "a"}, &scenario{name: "b"}, &scenario{name: "c"}
	listed := []*scenario{a, b, c}
	for _, tc := range []struct {
		reason string
		round  int
		want   []*scenario
	}{
		{"even rounds as listed", 0, []*scenario{a, b, c}},
		{"odd rounds reversed, so the last listed is not always last", 1, []*scenario{c, b, a}},
		{"and back", 2, []*scenario{a, b, c}},
	} {
		if got := inRoundOrder(listed, tc.round); !slices.Equal(got, tc.want) {
			t.Errorf("%s: inRoundOrder(round %d) = %v, want %v", tc.reason, tc.round, names(got), names(tc.want))
		}
	}
	if !slices.Equal(listed, []*scenario{a, b, c}) {
		t.Errorf("inRoundOrder changed the list it was given: %v", names(listed))
	}
}

func names(scenarios []*scenario) []string {
	var out []string
	for _, s := range scenarios {
		out = append(out, s.name)
	}
	return out
}
