package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestInstanceReportCommand: the agent's command line. A run that cannot
// work names every missing flag at once and exits 2; help exits 0.
func TestInstanceReportCommand(t *testing.T) {
	t.Setenv("POD_NAME", "")
	t.Setenv("POD_NAMESPACE", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	for _, tc := range []struct {
		name, reason string
		args         []string
		wantCode     int
		wantStderr   []string
	}{
		{"Help", "flags are documented", []string{"instance-report", "-h"}, 0, []string{"-report-file", "-heartbeat"}},
		{"NothingGiven", "outside a pod there is no pod, namespace or API server", []string{"instance-report"}, 2, []string{"--namespace, --pod, --api-server"}},
		{"PlainHTTP", "the token never goes over plain HTTP", []string{"instance-report", "--pod", "p", "--namespace", "n", "--api-server", "http://127.0.0.1:6443"}, 2, []string{"https://"}},
		{"ExtraArgs", "a stray argument is a mistake", []string{"instance-report", "extra"}, 2, []string{"unexpected arguments"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("%s\nrun(%v) = %d, want %d; stderr %q", tc.reason, tc.args, code, tc.wantCode, stderr.String())
			}
			for _, want := range tc.wantStderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("%s\nrun(%v): stderr %q does not contain %q", tc.reason, tc.args, stderr.String(), want)
				}
			}
		})
	}
}
