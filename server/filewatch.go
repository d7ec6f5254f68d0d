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
// rewritten in place), its mode (a chmod that makes it unreadable, or
// readable again).
type fileStamp struct {
	dev, inode uint64
	size       int64
	modTime    time.Time
	mode       os.FileMode
	missing    bool
}

func stampOf(path string) fileStamp {
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{missing: true}
	}
	stamp := fileStamp{size: info.Size(), modTime: info.ModTime(), mode: info.Mode()}
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
// change too, so a file that comes back is read. A change is read once it
// has settled (shouldReload): the kubelet's swap settles at once, a file
// written in place by hand is read when one poll finds it as the poll
// before did, not half-written.
func watchFiles(ctx context.Context, interval time.Duration, w watched, reload func() error, log *slog.Logger) {
	stamps := func() []fileStamp {
		out := make([]fileStamp, len(w.paths))
		for i, p := range w.paths {
			out[i] = stampOf(p)
		}
		return out
	}
	last := stamps() // what the last read read
	seen := last     // what the last poll saw
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
			changed := shouldReload(last, seen, now)
			seen = now
			if !changed {
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

// shouldReload decides, from the stamps of the last read, of the last poll
// and of this one, whether to read the files again: when they differ from
// what was read and have settled (this poll found what the last one did),
// or at once when one is missing (a deletion revokes: nothing to wait for).
// A file being written in place is read after its writer has been quiet
// for one poll interval, so a reload does not take a half-written token
// file's prefix of a token for a token; a writer slower than that can
// still be read mid-write: replace files by a rename, as the kubelet does.
func shouldReload(read, seen, now []fileStamp) bool {
	if equalStamps(now, read) {
		return false
	}
	for _, s := range now {
		if s.missing {
			return true
		}
	}
	return equalStamps(now, seen)
}

func equalStamps(a, b []fileStamp) bool {
	for i := range a {
		if a[i].dev != b[i].dev || a[i].inode != b[i].inode || a[i].size != b[i].size ||
			!a[i].modTime.Equal(b[i].modTime) || a[i].mode != b[i].mode || a[i].missing != b[i].missing {
			return false
		}
	}
	return true
}
