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
	// answerInputs is what the answers depend on besides the request and
	// the build (the Database hook's reporter image). The ETag covers it, so
	// a service started with another one never answers 412 to a request
	// whose cached answer was given with the old one.
	answerInputs string
}

// parentHooks lists every parent metahooks serves. databaseHook is the
// Database hook bound to the service's credentials key and to agentImage,
// the reporter containers' image (database.Hook), or database.Unconfigured,
// which answers 500 until a key is given.
func parentHooks(databaseHook composite.SyncFunc, agentImage string) []parentHook {
	return []parentHook{
		{route: "myapp", apiVersion: myapp.GroupVersionKind.GroupVersion().String(), kind: myapp.GroupVersionKind.Kind, sync: myapp.Sync, prefetch: myapp.Prefetch, customize: myapp.Customize},
		{route: "database", apiVersion: database.GroupVersionKind.GroupVersion().String(), kind: database.GroupVersionKind.Kind, sync: databaseHook, prefetch: database.Prefetch, customize: database.Customize,
			answerInputs: "instance-agent-image=" + agentImage},
	}
}

// databaseHook reads the credentials key file and binds the Database hook to
// it and to the reporter containers' image. No file gives
// database.Unconfigured. The key is the file's content with surrounding white
// space trimmed (a Secret made from a base64 string works).
func databaseHook(keyFile, agentImage string) (composite.SyncFunc, error) {
	if keyFile == "" {
		return database.Unconfigured, nil
	}
	raw, err := os.ReadFile(keyFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read the credentials key: %w", err)
	}
	hook, err := database.Hook(bytes.TrimSpace(raw), agentImage)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyFile, err)
	}
	return hook, nil
}

// reloadingDatabaseHook is databaseHook that reads the key file again
// whenever it changes, until ctx is done (watchFiles): the key lives in a
// mounted Secret, which may change at run time. A request in flight finishes
// with the key it started with. A key that does not load keeps the previous
// one in use, and the log names the file and the reason, never the key.
func reloadingDatabaseHook(ctx context.Context, keyFile, agentImage string, interval time.Duration, log *slog.Logger) (composite.SyncFunc, error) {
	hook, err := databaseHook(keyFile, agentImage)
	if err != nil || keyFile == "" {
		return hook, err
	}
	var current atomic.Pointer[composite.SyncFunc]
	current.Store(&hook)
	watchFiles(ctx, interval, []string{keyFile}, "credentials key", func() error {
		next, err := databaseHook(keyFile, agentImage)
		if err != nil {
			return err
		}
		current.Store(&next)
		return nil
	}, log)
	return func(req *composite.Request, now time.Time) (*composite.Response, error) {
		return (*current.Load())(req, now)
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
