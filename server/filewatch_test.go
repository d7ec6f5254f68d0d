package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// secretVolume lays out files the way the kubelet mounts a Secret: each
// name is a symlink to ..data/<name>, ..data a symlink to a timestamped
// directory. update writes a new directory and swaps ..data atomically.
type secretVolume struct {
	dir string
	gen int
}

func newSecretVolume(t *testing.T, files map[string][]byte) *secretVolume {
	t.Helper()
	v := &secretVolume{dir: t.TempDir()}
	v.update(t, files)
	for name := range files {
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(v.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func (v *secretVolume) path(name string) string { return filepath.Join(v.dir, name) }

func (v *secretVolume) update(t *testing.T, files map[string][]byte) {
	t.Helper()
	v.gen++
	data := filepath.Join(v.dir, "..2026_12_01_"+string(rune('a'+v.gen)))
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(data, name), content, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(v.dir, "..data_tmp")
	if err := os.Symlink(filepath.Base(data), tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(v.dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

func TestWatchFiles(t *testing.T) {
	cases := map[string]struct {
		reason     string
		change     func(t *testing.T, v *secretVolume)
		wantReload bool
	}{
		"Unchanged":      {reason: "nothing changed: no reload", change: func(*testing.T, *secretVolume) {}, wantReload: false},
		"SymlinkSwap":    {reason: "the kubelet swaps ..data to a new directory", change: func(t *testing.T, v *secretVolume) { v.update(t, map[string][]byte{"token": []byte("new")}) }, wantReload: true},
		"RewriteInPlace": {reason: "a file rewritten where it is", change: func(t *testing.T, v *secretVolume) { writeTestFile(t, v.path("token"), []byte("a longer one")) }, wantReload: true},
		"Removed":        {reason: "a file that goes away is a change too", change: func(t *testing.T, v *secretVolume) { os.Remove(v.path("token")) }, wantReload: true},
		"Chmod": {reason: "a file made unreadable (or readable again) is a change: its mode is in the stamp", change: func(t *testing.T, v *secretVolume) {
			if err := os.Chmod(v.path("token"), 0o000); err != nil {
				t.Fatal(err)
			}
		}, wantReload: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := newSecretVolume(t, map[string][]byte{"token": []byte("old")})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var reloads atomic.Int32
			watchFiles(ctx, 20*time.Millisecond, watched{role: "token", what: "test file", paths: []string{v.path("token")}}, func() error {
				reloads.Add(1)
				return nil
			}, slog.New(slog.NewJSONHandler(io.Discard, nil)))
			time.Sleep(60 * time.Millisecond) // a few polls of the unchanged file
			if n := reloads.Load(); n != 0 {
				t.Fatalf("%d reloads before any change", n)
			}
			tc.change(t, v)
			deadline := time.Now().Add(2 * time.Second)
			for reloads.Load() == 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			// An in-place rewrite (truncate, then write) may be seen as two changes.
			if got := reloads.Load(); (got > 0) != tc.wantReload {
				t.Errorf("%s\nreloads = %d, want reload %v", tc.reason, got, tc.wantReload)
			}
		})
	}
}

// TestShouldReload: a change is read once a poll finds it as the poll
// before did, a missing file at once.
func TestShouldReload(t *testing.T) {
	old := fileStamp{inode: 1, size: 3}
	half := fileStamp{inode: 1, size: 20}
	whole := fileStamp{inode: 1, size: 41}
	gone := fileStamp{missing: true}
	cases := map[string]struct {
		reason          string
		read, seen, now fileStamp
		want            bool
	}{
		"Unchanged":       {reason: "what was read: nothing to do", read: old, seen: old, now: old},
		"JustChanged":     {reason: "a change this poll: wait one poll, it may be half-written", read: old, seen: old, now: half},
		"StillChanging":   {reason: "changed again since the last poll: still being written", read: old, seen: half, now: whole},
		"Settled":         {reason: "as the last poll found it: read it", read: old, seen: whole, now: whole, want: true},
		"Deleted":         {reason: "a missing file revokes at once", read: old, seen: old, now: gone, want: true},
		"StillGone":       {reason: "read as missing already", read: gone, seen: gone, now: gone},
		"BackSettled":     {reason: "back and settled: read", read: gone, seen: whole, now: whole, want: true},
		"BackJustWritten": {reason: "back this poll: wait one poll", read: gone, seen: gone, now: half},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := shouldReload([]fileStamp{tc.read}, []fileStamp{tc.seen}, []fileStamp{tc.now}); got != tc.want {
				t.Errorf("%s\nshouldReload = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

func writeTestFile(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestWatchFilesReloadMetrics: every reload of a changed file sets the
// last-success gauge of its role and counts a success or a failure; the
// read at start sets the gauge to 1 and both counters to 0.
func TestWatchFilesReloadMetrics(t *testing.T) {
	fail := errors.New("bad file")
	cases := map[string]struct {
		reason  string
		results []error // what successive reloads return
		want    reloadFigures
	}{
		"Start":           {reason: "nothing changed: the start's success only", want: reloadFigures{Gauge: 1}},
		"Success":         {reason: "a good reload", results: []error{nil}, want: reloadFigures{Gauge: 1, Successes: 1}},
		"Failure":         {reason: "a failed reload sets the gauge to 0", results: []error{fail}, want: reloadFigures{Gauge: 0, Failures: 1}},
		"FailureRecovers": {reason: "a good reload after a failure sets it back to 1", results: []error{fail, nil}, want: reloadFigures{Gauge: 1, Successes: 1, Failures: 1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := newSecretVolume(t, map[string][]byte{"token": []byte("old")})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			reloads := newConfigReloads()
			var calls atomic.Int32
			watchFiles(ctx, 10*time.Millisecond, watched{role: "client_ca", what: "test file", paths: []string{v.path("token")}, reloads: reloads}, func() error {
				n := int(calls.Add(1))
				if n > len(tc.results) {
					return nil
				}
				return tc.results[n-1]
			}, slog.New(slog.DiscardHandler))
			for i := range tc.results {
				v.update(t, map[string][]byte{"token": []byte(strings.Repeat("x", i+1))})
				deadline := time.Now().Add(30 * time.Second)
				for int(calls.Load()) < i+1 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
			}
			time.Sleep(50 * time.Millisecond) // the last reload's figures recorded
			if diff := cmp.Diff(tc.want, figuresOf(reloads, "client_ca")); diff != "" {
				t.Errorf("%s\nreload metrics (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// reloadFigures are the reload metrics of one role.
type reloadFigures struct {
	Gauge, Successes, Failures float64
}

func figuresOf(c *configReloads, role string) reloadFigures {
	return reloadFigures{
		Gauge:     testutil.ToFloat64(c.lastSuccess.WithLabelValues(role)),
		Successes: testutil.ToFloat64(c.reloads.WithLabelValues(role, "success")),
		Failures:  testutil.ToFloat64(c.reloads.WithLabelValues(role, "failure")),
	}
}
