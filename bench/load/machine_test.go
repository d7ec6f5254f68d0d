package load

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProcStat(t *testing.T) {
	for _, tc := range []struct {
		reason, stat string
		want         MachineTicks
		wantErr      bool
	}{
		{"the eight states summed, steal the eighth; guest left out (counted in user)",
			"cpu  100 2 30 400 5 0 6 7 50 0\ncpu0 50 1 15 200 2 0 3 3 25 0\n", MachineTicks{Total: 550, Steal: 7}, false},
		{"an older kernel's line without the guest columns", "cpu 1 2 3 4 5 6 7 8\n", MachineTicks{Total: 36, Steal: 8}, false},
		{"no steal column: not a figure to trust", "cpu 1 2 3 4 5 6 7\n", MachineTicks{}, true},
		{"a per-CPU line first", "cpu0 1 2 3 4 5 6 7 8\n", MachineTicks{}, true},
		{"a number that is not one", "cpu 1 2 3 x 5 6 7 8\n", MachineTicks{}, true},
	} {
		got, err := parseProcStat([]byte(tc.stat))
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: parseProcStat error = %v, want error %v", tc.reason, err, tc.wantErr)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: parseProcStat (-want +got):\n%s", tc.reason, diff)
		}
	}
}

func TestStealSince(t *testing.T) {
	for _, tc := range []struct {
		reason         string
		earlier, later MachineTicks
		want           float64
	}{
		{"a fifth of the ticks stolen", MachineTicks{Total: 1000, Steal: 10}, MachineTicks{Total: 1500, Steal: 110}, 0.2},
		{"no tick passed", MachineTicks{Total: 1000, Steal: 10}, MachineTicks{Total: 1000, Steal: 10}, 0},
		{"counters that went back (another boot): no figure", MachineTicks{Total: 1000, Steal: 10}, MachineTicks{Total: 900, Steal: 5}, 0},
		{"steal went back while the total grew: no figure, not a wrapped difference", MachineTicks{Total: 1000, Steal: 10}, MachineTicks{Total: 1100, Steal: 5}, 0},
		{"steal grew past the total (a live migration): all of it, not more", MachineTicks{Total: 1000, Steal: 10}, MachineTicks{Total: 1100, Steal: 500}, 1},
	} {
		if got := tc.later.StealSince(tc.earlier); got != tc.want {
			t.Errorf("%s: StealSince = %v, want %v", tc.reason, got, tc.want)
		}
	}
}

func TestReadMachineTicksOfThisMachine(t *testing.T) {
	before, err := ReadMachineTicks()
	if err != nil {
		t.Fatal(err)
	}
	if before.Total == 0 || before.Steal > before.Total {
		t.Fatalf("ReadMachineTicks = %+v, want a positive total holding the steal", before)
	}
}
