package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
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
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := newSecretVolume(t, map[string][]byte{"token": []byte("old")})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var reloads atomic.Int32
			watchFiles(ctx, 20*time.Millisecond, []string{v.path("token")}, "test file", func() error {
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

func writeTestFile(t *testing.T, path string, content []byte) {
	t.Helper()
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
}
