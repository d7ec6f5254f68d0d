package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSummary(t *testing.T) {
	cases := []struct {
		reason, dump string
		want         int64
		wantErr      bool
	}{
		{"a complete dump", "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\nsummary: 1824369615\n\nfl=(1) x.go\n", 1824369615, false},
		{"a dump still being written has no summary yet", "version: 1\ncreator: callgrind-3.19.0\nevents: Ir\n", 0, true},
		{"a summary that is no number", "summary: many\n", 0, true},
	}
	for _, tc := range cases {
		file := filepath.Join(t.TempDir(), "callgrind.out.1")
		if err := os.WriteFile(file, []byte(tc.dump), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := summary(file)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s: summary = %d, %v; want %d, error %v", tc.reason, got, err, tc.want, tc.wantErr)
		}
	}
	if _, err := summary(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("summary of a file not written yet: no error")
	}
}
