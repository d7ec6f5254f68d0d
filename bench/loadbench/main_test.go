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
		{"requests/s ratios of each round (0.10, 0.50, 0.50), not of the scenarios' medians (200/600)", rpsRatio, spread{median: 0.5, min: 0.10, max: 0.50, used: 3, of: 3, allMin: 0.10, allMax: 0.50, at: 1}},
		{"CPU ratios: the floor's CPU per request over the hook's, each round", cpuRatio, spread{median: 0.25, min: 0.25, max: 0.5, used: 3, of: 3, allMin: 0.25, allMax: 0.5, at: 1}},
	} {
		if diff := cmp.Diff(tc.want, perRound(hook, floor, tc.f), cmp.AllowUnexported(spread{})); diff != "" {
			t.Errorf("%s: perRound (-want +got):\n%s", tc.reason, diff)
		}
	}
}

func TestPerRoundOnlyPairsRoundsBothHave(t *testing.T) {
	a := &scenario{rounds: []measured{aRound(100, 0, 1), aRound(400, 0, 1)}}
	b := &scenario{rounds: []measured{aRound(1000, 0, 1)}}
	if got, want := perRound(a, b, rpsRatio), (spread{median: 0.1, min: 0.1, max: 0.1, used: 1, of: 1, allMin: 0.1, allMax: 0.1}); got != want {
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
		{"odd count: the middle one, with the stolen share of its own run", []figure{{3, 0.03, 0}, {1, 0.01, 1}, {2, 0.02, 2}}, spread{median: 2, min: 1, max: 3, stolen: 0.02, used: 3, of: 3, allMin: 1, allMax: 3, at: 2}},
		{"even count: the lower middle one, as median takes it", []figure{{4, 0, 0}, {1, 0, 1}, {3, 0, 2}, {2, 0.02, 3}}, spread{median: 2, min: 1, max: 4, stolen: 0.02, used: 4, of: 4, allMin: 1, allMax: 4, at: 3}},
		{"a round without requests (NaN, +Inf) is left out, not taken as the least", []figure{{math.NaN(), 0, 0}, {3, 0, 1}, {math.Inf(1), 0, 2}, {1, 0, 3}, {2, 0, 4}}, spread{median: 2, min: 1, max: 3, used: 3, of: 3, allMin: 1, allMax: 3, at: 4}},
		{"figures from runs with over 5% stolen are left out while any other is there", []figure{{0.45, 0.365, 0}, {0.25, 0.01, 1}, {0.27, 0.02, 2}, {0.40, 0.2, 3}}, spread{median: 0.25, min: 0.25, max: 0.27, stolen: 0.01, used: 2, of: 4, allMin: 0.25, allMax: 0.45, at: 1}},
		{"none trusted: all of them, and the median's share says so", []figure{{0.45, 0.365, 0}, {0.25, 0.10, 1}, {0.30, 0.2, 2}}, spread{median: 0.30, min: 0.25, max: 0.45, stolen: 0.2, used: 3, of: 3, allMin: 0.25, allMax: 0.45, at: 2}},
	} {
		if got := spreadOf(tc.figures); got != tc.want {
			t.Errorf("%s: spreadOf(%v) = %+v, want %+v", tc.reason, tc.figures, got, tc.want)
		}
	}
}

func TestPerRoundStolenIsTheWorseOfThePair(t *testing.T) {
	hook := &scenario{rounds: []measured{{Result: load.Result{RPS: 100}, steal: 0.01}, {Result: load.Result{RPS: 300}, steal: 0.01}, {Result: load.Result{RPS: 200}, steal: 0.01}}}
	floor := &scenario{rounds: []measured{{Result: load.Result{RPS: 1000}, steal: 0.03}, {Result: load.Result{RPS: 1000}, steal: 0.30}, {Result: load.Result{RPS: 1000}, steal: 0.04}}}
	// Ratios 0.1, 0.3, 0.2; the second round's floor lost 30%, so it is
	// left out, and the median of 0.1 and 0.2 is the first round's.
	want := spread{median: 0.1, min: 0.1, max: 0.2, stolen: 0.03, used: 2, of: 3, allMin: 0.1, allMax: 0.3, at: 0}
	if diff := cmp.Diff(want, perRound(hook, floor, rpsRatio), cmp.AllowUnexported(spread{})); diff != "" {
		t.Errorf("perRound (-want +got):\n%s", diff)
	}
}

func TestEnoughTrusted(t *testing.T) {
	quiet, stolen := measured{steal: 0.01}, measured{steal: 0.2}
	for _, tc := range []struct {
		reason string
		a, b   []measured
		want   bool
	}{
		{"three rounds with both runs trusted", []measured{quiet, quiet, quiet}, []measured{quiet, quiet, quiet}, true},
		{"one floor run stolen from: two trusted pairs, not three", []measured{quiet, quiet, quiet}, []measured{quiet, stolen, quiet}, false},
		{"a fourth round makes up for it", []measured{quiet, quiet, quiet, quiet}, []measured{quiet, stolen, quiet, quiet}, true},
		{"trusted runs in different rounds do not pair", []measured{quiet, stolen, quiet, stolen}, []measured{stolen, quiet, stolen, quiet}, false},
	} {
		pairs := [][2]*scenario{{{rounds: tc.a}, {rounds: tc.b}}}
		if got := enoughTrusted(pairs, 3); got != tc.want {
			t.Errorf("%s: enoughTrusted = %v, want %v", tc.reason, got, tc.want)
		}
	}
}

func TestShownUsesTrustedRounds(t *testing.T) {
	rounds := []measured{
		{Result: load.Result{RPS: 900}, steal: 0.30},
		{Result: load.Result{RPS: 300}, steal: 0.01},
		{Result: load.Result{RPS: 400}, steal: 0.02},
	}
	s := &scenario{rounds: rounds}
	if got := s.shown(); got != rounds[1] {
		t.Errorf("shown = %+v, want the lower middle of the two trusted rounds, %+v", got, rounds[1])
	}
	all := &scenario{rounds: []measured{rounds[0], {Result: load.Result{RPS: 100}, steal: 0.2}}}
	if got := all.shown(); got != all.rounds[1] {
		t.Errorf("shown with no trusted round = %+v, want the lower middle of all, %+v", got, all.rounds[1])
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

func TestRangeOf(t *testing.T) {
	for _, tc := range []struct {
		reason string
		s      spread
		want   string
	}{
		{"every figure trusted: the range alone", spread{min: 0.24, max: 0.29, used: 3, of: 3, allMin: 0.24, allMax: 0.29}, "0.24-0.29"},
		{"some left out: how many, and the range of all", spread{min: 0.25, max: 0.25, used: 1, of: 9, allMin: 0.21, allMax: 0.45}, "0.25-0.25 (1 trusted of 9; all: 0.21-0.45)"},
	} {
		if got := tc.s.rangeOf("%.2f"); got != tc.want {
			t.Errorf("%s: rangeOf = %q, want %q", tc.reason, got, tc.want)
		}
	}
}
