package kube

import "testing"

func TestValidateCron(t *testing.T) {
	cases := map[string]struct {
		reason  string
		line    string
		wantErr bool
	}{
		"Nightly":    {reason: "the usual 5-field line", line: "0 2 * * *"},
		"Steps":      {reason: "steps and ranges", line: "*/15 8-18 * * 1-5"},
		"Names":      {reason: "month and weekday names", line: "0 3 1 JAN,JUL SUN"},
		"Seconds":    {reason: "6 fields (seconds first) is CNPG's format, not ours", line: "0 0 2 * * *", wantErr: true},
		"TooFew":     {reason: "4 fields", line: "0 2 * *", wantErr: true},
		"Descriptor": {reason: "descriptors are not 5-field lines", line: "@daily", wantErr: true},
		"BadMinute":  {reason: "minute 60 does not exist", line: "60 2 * * *", wantErr: true},
		"BadWeekday": {reason: "weekday 8 does not exist", line: "0 2 * * 8", wantErr: true},
		"Empty":      {reason: "nothing", line: "", wantErr: true},
		"Garbage":    {reason: "not cron", line: "a b c d e", wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := ValidateCron(tc.line); (err != nil) != tc.wantErr {
				t.Errorf("%s\nValidateCron(%q) = %v, want error %v", tc.reason, tc.line, err, tc.wantErr)
			}
		})
	}
}
