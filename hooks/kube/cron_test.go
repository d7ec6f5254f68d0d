package kube

import (
	"strconv"
	"strings"
	"testing"
)

func TestValidateCron(t *testing.T) {
	cases := map[string]struct {
		reason  string
		line    string
		wantErr bool
	}{
		"Nightly":     {reason: "the usual 5-field line", line: "0 2 * * *"},
		"Steps":       {reason: "steps and ranges", line: "*/15 8-18 * * 1-5"},
		"Names":       {reason: "month and weekday names", line: "0 3 1 JAN,JUL SUN"},
		"EveryMinute": {reason: "every minute listed, the longest sensible line", line: everyMinute()},
		"AtTheBound":  {reason: "a line of exactly MaxCronLength characters", line: padded(MaxCronLength)},
		"PastBound":   {reason: "one more character", line: padded(MaxCronLength + 1), wantErr: true},
		"Seconds":     {reason: "6 fields (seconds first) is CNPG's format, not ours", line: "0 0 2 * * *", wantErr: true},
		"TooFew":      {reason: "4 fields", line: "0 2 * *", wantErr: true},
		"Descriptor":  {reason: "descriptors are not 5-field lines", line: "@daily", wantErr: true},
		"BadMinute":   {reason: "minute 60 does not exist", line: "60 2 * * *", wantErr: true},
		"BadWeekday":  {reason: "weekday 8 does not exist", line: "0 2 * * 8", wantErr: true},
		"Empty":       {reason: "nothing", line: "", wantErr: true},
		"Garbage":     {reason: "not cron", line: "a b c d e", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := ValidateCron(tc.line); (err != nil) != tc.wantErr {
				t.Errorf("%s\nValidateCron(%q) = %v, want error %v", tc.reason, tc.line, err, tc.wantErr)
			}
		})
	}
}

// everyMinute is "0,1,...,59 * * * *" (179 characters).
func everyMinute() string {
	minutes := make([]string, 60)
	for i := range minutes {
		minutes[i] = strconv.Itoa(i)
	}
	return strings.Join(minutes, ",") + " * * * *"
}

// padded is a valid line of n characters (n > 9): minute 1 listed over and
// over, "10" first when the list must have an even length.
func padded(n int) string {
	m := n - len(" * * * *")
	if m%2 == 1 {
		return "1" + strings.Repeat(",1", (m-1)/2) + " * * * *"
	}
	return "10" + strings.Repeat(",1", (m-2)/2) + " * * * *"
}

// worstCron is the line within the bound with the most ranges with a step,
// each setting every bit of its field: "0-59/1,0-59/1,... * * * *".
func worstCron() string {
	return strings.TrimSuffix(strings.Repeat("0-59/1,", (MaxCronLength-8)/7), ",") + " * * * *"
}

// TestValidateCronBoundedCost: a huge line is refused by its length, with
// an error quoting a short prefix, at a bounded number of allocations; the
// worst lines within the bound cost a bounded number too. Before the bound,
// a valid 1 MB line was accepted and an invalid one gave a 3.1 MB error.
func TestValidateCronBoundedCost(t *testing.T) {
	for _, tc := range []struct {
		reason    string
		line      string
		wantErr   bool
		maxAllocs float64
	}{
		{"a 1 MB valid list is refused by its length", strings.Repeat("1,", 1<<19) + "1 * * * *", true, 8},
		{"a 1 MB invalid line is refused by its length", strings.Repeat("a", 1<<20) + " * * * *", true, 8},
		{"the worst line within the bound: ranges with steps", worstCron(), false, 200},
		{"every item a plain number: the most items", padded(MaxCronLength), false, 400},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			err := ValidateCron(tc.line)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ValidateCron = %v, want error %v", err, tc.wantErr)
			}
			if err != nil && len(err.Error()) > 256 {
				t.Errorf("error has %d bytes: %.300s", len(err.Error()), err)
			}
			if allocs := testing.AllocsPerRun(5, func() { _ = ValidateCron(tc.line) }); allocs > tc.maxAllocs {
				t.Errorf("ValidateCron allocates %v times, want at most %v", allocs, tc.maxAllocs)
			}
		})
	}
}

func BenchmarkValidateCronWorst(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"Ranges", worstCron()},
		{"Items", padded(MaxCronLength)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := ValidateCron(bc.line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
