package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"metahooks/hooks/composite"
	"metahooks/hooks/database"
	"metahooks/hooks/myapp"
)

// hookCustomize names the customize route and hook.
const hookCustomize = "customize"

// parentHook ties a parent kind to its route segment and its hooks.
type parentHook struct {
	route      string // /hooks/<route>/sync
	apiVersion string
	kind       string
	sync       composite.SyncFunc
	// prefetch is what the request scan decodes for sync (composite.Prefetch).
	prefetch *composite.Prefetch
	// customize serves /hooks/<route>/customize; nil when the parent has no
	// customize hook (and no such route).
	customize composite.CustomizeFunc
	// answerInputs, when set, is what the answers depend on besides the
	// request and the build, as it is now (the Database hook's reporter
	// image and credentials key, which can change at run time). The ETag
	// covers it, read on every request, so a service with other inputs
	// never answers 412 to a request whose cached answer was given with the
	// old ones.
	answerInputs func() []byte
}

// parentHooks lists every parent metahooks serves, the Database as db binds
// it.
func parentHooks(db databaseBinding) []parentHook {
	return []parentHook{
		{route: "myapp", apiVersion: myapp.GroupVersionKind.GroupVersion().String(), kind: myapp.GroupVersionKind.Kind, sync: myapp.Sync, prefetch: myapp.Prefetch, customize: myapp.Customize},
		{route: "database", apiVersion: database.GroupVersionKind.GroupVersion().String(), kind: database.GroupVersionKind.Kind, sync: db.sync, prefetch: database.Prefetch, customize: database.Customize,
			answerInputs: db.answerInputs},
	}
}

// databaseBinding is the Database hook as the service runs it, with what its
// answers depend on besides the request.
type databaseBinding struct {
	// sync is database.Hook bound to the credentials key and the reporter
	// containers' image, or database.Unconfigured, which answers 500 until a
	// key is given.
	sync composite.SyncFunc
	// answerInputs names the image and the key sync uses now, the key by its
	// fingerprint (database.KeyFingerprint).
	answerInputs func() []byte
}

// bound is a databaseBinding whose inputs never change.
func bound(sync composite.SyncFunc, agentImage string, key []byte) databaseBinding {
	inputs := []byte("instance-agent-image=" + agentImage)
	if key != nil {
		inputs = append(append(inputs, "\x00credentials-key="...), database.KeyFingerprint(key)...)
	}
	return databaseBinding{sync: sync, answerInputs: func() []byte { return inputs }}
}

// databaseHook reads the credentials key file and binds the Database hook to
// it and to the reporter containers' image. No file gives
// database.Unconfigured. The key is the file's content with surrounding white
// space trimmed (a Secret made from a base64 string works).
func databaseHook(keyFile, agentImage string) (databaseBinding, error) {
	if keyFile == "" {
		return bound(database.Unconfigured, agentImage, nil), nil
	}
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		return databaseBinding{}, fmt.Errorf("cannot read the credentials key: %w", err)
	}
	key := bytes.TrimSpace(raw)
	hook, err := database.Hook(key, agentImage)
	if err != nil {
		return databaseBinding{}, fmt.Errorf("%s: %w", keyFile, err)
	}
	return bound(hook, agentImage, key), nil
}

// reloadingDatabaseHook is databaseHook that reads the key file again
// whenever it changes, until ctx is done (watchFiles): the key lives in a
// mounted Secret, which may change at run time. A request in flight finishes
// with the key it started with. A key that does not load keeps the previous
// one in use (a bad or deleted key must never change passwords), marks the
// failure in the reload metrics (role credentials_key), and the log names
// the file and the reason, never the key.
//
// The hook and its inputs are read apart, so a request that arrives as the
// key changes may be answered with the new key under an ETag naming the old
// one; the next request's ETag names the new key, so that answer is
// replayed only if the key changes back, and either key is valid for a
// Secret not yet observed (docs/database.md, Credentials).
func reloadingDatabaseHook(ctx context.Context, keyFile, agentImage string, interval time.Duration, reloads *configReloads, log *slog.Logger) (databaseBinding, error) {
	first, err := databaseHook(keyFile, agentImage)
	if err != nil || keyFile == "" {
		return first, err
	}
	var current atomic.Pointer[databaseBinding]
	current.Store(&first)
	watchFiles(ctx, interval, watched{role: "credentials_key", what: "credentials key", paths: []string{keyFile}, reloads: reloads}, func() error {
		next, err := databaseHook(keyFile, agentImage)
		if err != nil {
			return err
		}
		current.Store(&next)
		return nil
	}, log)
	return databaseBinding{
		sync: func(req *composite.Request, now time.Time) (*composite.Response, error) {
			return current.Load().sync(req, now)
		},
		answerInputs: func() []byte { return current.Load().answerInputs() },
	}, nil
}

// hookForKind finds the hook of a parent by apiVersion and kind.
func hookForKind(parents []parentHook, apiVersion, kind string) (parentHook, bool) {
	for _, h := range parents {
		if h.apiVersion == apiVersion && h.kind == kind {
			return h, true
		}
	}
	return parentHook{}, false
}
