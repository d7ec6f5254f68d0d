package main

import (
	"time"

	"metahooks/hooks/composite"
	"metahooks/hooks/myapp"
)

// hookFunc is the pure function behind one parent's sync and finalize hooks.
type hookFunc func(req *composite.Request, now time.Time) (*composite.Response, error)

// parentHook ties a parent kind to its route segment and its hook.
type parentHook struct {
	route      string // /hooks/<route>/sync
	apiVersion string
	kind       string
	sync       hookFunc
}

// parentHooks lists every parent metahooks serves.
func parentHooks() []parentHook {
	return []parentHook{
		{route: "myapp", apiVersion: myapp.GroupVersionKind.GroupVersion().String(), kind: myapp.GroupVersionKind.Kind, sync: myapp.Sync},
	}
}

// hookForKind finds the hook of a parent by apiVersion and kind.
func hookForKind(apiVersion, kind string) (parentHook, bool) {
	for _, h := range parentHooks() {
		if h.apiVersion == apiVersion && h.kind == kind {
			return h, true
		}
	}
	return parentHook{}, false
}
