package instancereport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"metahooks/hooks/database"
)

// reportFile is a report as scripts/instance.sh writes it.
func reportFile(role, receiving, lsn, at string) string {
	return "example.com/role=" + role + "\nexample.com/timeline=2\nexample.com/lsn=" + lsn +
		"\nexample.com/receiving=" + receiving + "\nexample.com/epoch=0\nexample.com/reported-at=" + at + "\n"
}

// TestAgentStep feeds one agent a sequence of report files, one step each,
// and checks which steps publish.
func TestAgentStep(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	streaming := func(lsn, at string) string { return reportFile("standby", "true", lsn, at) }
	type step struct {
		after       time.Duration // since t0
		file        string        // "" removes the file
		switchover  bool          // the record has switchoverTo
		publishErr  error
		wantPublish bool
	}
	for _, tc := range []struct {
		name, reason string
		steps        []step
	}{
		{"NoFile", "nothing is published before the server has written a report", []step{
			{after: 0, file: "", wantPublish: false},
		}},
		{"Malformed", "a report the hook would not accept is not published", []step{
			{after: 0, file: "example.com/role=standby\n", wantPublish: false},
		}},
		{"FirstThenUnchanged", "the first report goes out at once; the same report is never written again", []step{
			{after: 0, file: streaming("0/100", "2026-12-01T10:00:00Z"), wantPublish: true},
			{after: time.Second, file: streaming("0/100", "2026-12-01T10:00:00Z"), wantPublish: false},
			{after: time.Minute, file: streaming("0/100", "2026-12-01T10:00:00Z"), wantPublish: false},
		}},
		{"PositionWaitsForHeartbeat", "WAL position and time alone are published once per heartbeat", []step{
			{after: 0, file: streaming("0/100", "2026-12-01T10:00:00Z"), wantPublish: true},
			{after: time.Second, file: streaming("0/200", "2026-12-01T10:00:01Z"), wantPublish: false},
			{after: 9 * time.Second, file: streaming("0/300", "2026-12-01T10:00:09Z"), wantPublish: false},
			{after: 10 * time.Second, file: streaming("0/400", "2026-12-01T10:00:10Z"), wantPublish: true},
			{after: 11 * time.Second, file: streaming("0/500", "2026-12-01T10:00:11Z"), wantPublish: false},
		}},
		{"StateAtOnce", "a standby that stops streaming is published at once", []step{
			{after: 0, file: streaming("0/100", "2026-12-01T10:00:00Z"), wantPublish: true},
			{after: time.Second, file: reportFile("standby", "false", "0/100", "2026-12-01T10:00:01Z"), wantPublish: true},
			{after: 2 * time.Second, file: reportFile("primary", "false", "0/100", "2026-12-01T10:00:02Z"), wantPublish: true},
		}},
		{"Switchover", "during a switchover every change is published at once", []step{
			{after: 0, file: streaming("0/100", "2026-12-01T10:00:00Z"), wantPublish: true},
			{after: time.Second, file: streaming("0/200", "2026-12-01T10:00:01Z"), switchover: true, wantPublish: true},
			{after: 2 * time.Second, file: streaming("0/200", "2026-12-01T10:00:01Z"), switchover: true, wantPublish: false},
		}},
		{"RetryAfterError", "a failed publish is retried at the next step, and the one after it is a heartbeat later", []step{
			{after: 0, file: streaming("0/100", "2026-12-01T10:00:00Z"), publishErr: errors.New("connection refused"), wantPublish: true},
			{after: time.Second, file: streaming("0/100", "2026-12-01T10:00:00Z"), wantPublish: true},
			{after: 2 * time.Second, file: streaming("0/200", "2026-12-01T10:00:02Z"), wantPublish: false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file, topology := filepath.Join(dir, "report"), filepath.Join(dir, "topology")
			if err := os.Mkdir(topology, 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := &Config{ReportFile: file, TopologyDir: topology, Heartbeat: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			var published []database.PodReport
			var nextErr error
			a := agent{cfg: cfg, publish: func(_ context.Context, r database.PodReport) error {
				published = append(published, r)
				return nextErr
			}}
			for i, s := range tc.steps {
				if s.file == "" {
					_ = os.Remove(file)
				} else if err := os.WriteFile(file, []byte(s.file), 0o644); err != nil {
					t.Fatal(err)
				}
				switchover := filepath.Join(topology, database.TopologySwitchoverFile)
				if s.switchover {
					if err := os.WriteFile(switchover, []byte("orders-1"), 0o644); err != nil {
						t.Fatal(err)
					}
				} else {
					_ = os.Remove(switchover)
				}
				before := len(published)
				nextErr = s.publishErr
				a.step(context.Background(), t0.Add(s.after))
				if got := len(published) > before; got != s.wantPublish {
					t.Fatalf("%s\nstep %d (%s): published %v, want %v", tc.reason, i, s.after, got, s.wantPublish)
				}
				if s.wantPublish {
					want, err := database.ParseInstanceReport([]byte(s.file))
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, published[len(published)-1]); diff != "" {
						t.Errorf("%s\nstep %d published (-want +got):\n%s", tc.reason, i, diff)
					}
				}
			}
		})
	}
}

// TestAgentLogsOnce: the same problem at every poll is logged once, and the
// recovery once.
func TestAgentLogsOnce(t *testing.T) {
	var logs bytes.Buffer
	file := filepath.Join(t.TempDir(), "report")
	a := agent{cfg: &Config{ReportFile: file, Heartbeat: 10 * time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		publish: func(context.Context, database.PodReport) error { return nil }}
	for range 5 {
		a.step(context.Background(), time.Now())
	}
	if err := os.WriteFile(file, []byte(reportFile("primary", "false", "0/100", "2026-12-01T10:00:00Z")), 0o644); err != nil {
		t.Fatal(err)
	}
	a.step(context.Background(), time.Now())
	if n := strings.Count(logs.String(), "report not published"); n != 1 {
		t.Errorf("logged the missing file %d times, want once:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), "publishing again"); n != 1 {
		t.Errorf("logged the recovery %d times, want once:\n%s", n, logs.String())
	}
}
