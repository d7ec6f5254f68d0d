package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunCommands(t *testing.T) {
	cases := map[string]struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		"Version": {args: []string{"version"}, wantCode: 0, wantStdout: version},
		"Help":    {args: []string{"help"}, wantCode: 0, wantStdout: "metahooks serve"},
		"None":    {args: nil, wantCode: 2, wantStderr: "Usage"},
		"Unknown": {args: []string{"deploy"}, wantCode: 2, wantStderr: `unknown command "deploy"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.wantCode || !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("run(%v) = %d, stdout %q, stderr %q", tc.args, code, stdout.String(), stderr.String())
			}
		})
	}
}
