package main

import (
	"context"
	"log/slog"
	"os"
	"syscall"
	"time"
)

// reloadInterval is how often mounted credential files are checked for a
// change. A change takes effect within one interval of the kubelet swapping
// the Secret volume (it does so about once a minute).
const reloadInterval = 2 * time.Second

// fileStamp is what a change of a file changes: the file os.Stat reaches
// through every symlink (a Secret volume swaps its ..data symlink to a new
// directory, so the inode changes), its size and modification time (a file
// rewritten in place).
type fileStamp struct {
	dev, inode uint64
	size       int64
	modTime    time.Time
	missing    bool
}

func stampOf(path string) fileStamp {
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{missing: true}
	}
	stamp := fileStamp{size: info.Size(), modTime: info.ModTime()}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		stamp.dev, stamp.inode = uint64(sys.Dev), sys.Ino
	}
	return stamp
}

// watched names a set of files watchFiles re-reads together.
type watched struct {
	role    string   // the reload metrics' file label (configReloads)
	what    string   // for the log: "bearer tokens"
	paths   []string // every path is logged; never their content
	reloads *configReloads
}

// watchFiles calls reload whenever one of w.paths changes, checking every
// interval until ctx is done; the caller has just read them (the read at
// start succeeded). reload reads the files again and swaps in what they
// hold; when it fails, it decides what stays in use (a grant keeps nothing
// the file no longer lists; a key keeps the last good one) and its error,
// which names files and problems, never their content, says so. Every
// reload is counted and sets the last-success gauge of w.role
// (configReloads), a failure is logged at ERROR. A missing file counts as a
// change too, so a file that comes back is read.
func watchFiles(ctx context.Context, interval time.Duration, w watched, reload func() error, log *slog.Logger) {
	stamps := func() []fileStamp {
		out := make([]fileStamp, len(w.paths))
		for i, p := range w.paths {
			out[i] = stampOf(p)
		}
		return out
	}
	last := stamps()
	w.reloads.loaded(w.role)
	ticker := time.NewTicker(interval)
	go func() {
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
			now := stamps()
			if equalStamps(now, last) {
				continue
			}
			last = now
			err := reload()
			w.reloads.reloaded(w.role, err)
			if err != nil {
				log.Error("cannot reload "+w.what, "file", w.role, "files", w.paths, "error", err.Error())
				continue
			}
			log.Info("reloaded "+w.what, "file", w.role, "files", w.paths)
		}
	}()
}

func equalStamps(a, b []fileStamp) bool {
	for i := range a {
		if a[i].dev != b[i].dev || a[i].inode != b[i].inode || a[i].size != b[i].size ||
			!a[i].modTime.Equal(b[i].modTime) || a[i].missing != b[i].missing {
			return false
		}
	}
	return true
}
