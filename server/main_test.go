package main

import (
	"bytes"
	"strings"
	"testing"

	"metahooks/hooks/database"
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

// TestHelpListsEveryFlag: `metahooks --help` shows every flag of every
// command, as its own -h does (issue 31: --help left out
// --credentials-key-file and --instance-agent-image), and instance-report's
// default report file is the one the Database's pods use.
func TestHelpListsEveryFlag(t *testing.T) {
	var help, stderr bytes.Buffer
	if code := run([]string{"--help"}, &help, &stderr); code != 0 {
		t.Fatalf("--help: exit %d: %s", code, stderr.String())
	}
	for _, command := range []string{"serve", "render", "instance-report"} {
		var out bytes.Buffer
		if code := run([]string{command, "-h"}, &out, &out); code != 0 {
			t.Fatalf("%s -h: exit %d: %s", command, code, out.String())
		}
		flags := 0
		for _, line := range strings.Split(out.String(), "\n") {
			if name, ok := strings.CutPrefix(line, "  -"); ok {
				flags++
				if name, _, _ = strings.Cut(name, " "); !strings.Contains(help.String(), "  -"+name) {
					t.Errorf("--help does not show %s's -%s", command, name)
				}
			}
		}
		if flags == 0 {
			t.Errorf("%s -h shows no flag: %q", command, out.String())
		}
		if !strings.Contains(help.String(), out.String()) {
			t.Errorf("--help does not hold %s -h whole", command)
		}
	}
	for _, want := range []string{"-credentials-key-file", "-instance-agent-image", "-metrics-auth-token-file", "-namespace", `(default "` + database.ReportFile + `")`} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("--help does not mention %s", want)
		}
	}
}
