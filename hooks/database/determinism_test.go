package database

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	dbv1 "metahooks/api/v1"
)

func TestSameRequestSameBytes(t *testing.T) {
	for _, sc := range append(scenarios, instanceScenarios...) {
		t.Run(sc.name, func(t *testing.T) {
			req := sc.build(t)
			a, _ := json.Marshal(mustSync(t, req))
			b, _ := json.Marshal(mustSync(t, sc.build(t)))
			if !bytes.Equal(a, b) {
				t.Errorf("%s\nthe same request must give byte-identical answers:\n%s", sc.reason, cmp.Diff(string(a), string(b)))
			}
		})
	}
}

// TestFixedPoint: once the parent's status holds what the hook computed, the
// hook computes the same status again, whatever the time: no status write, no
// hot loop.
func TestFixedPoint(t *testing.T) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			req := sc.build(t)
			st := decodeStatus(t, mustSync(t, req))

			var parent dbv1.Database
			if err := json.Unmarshal(req.Parent, &parent); err != nil {
				t.Fatal(err)
			}
			parent.Status = st
			req.Parent = mustJSON(t, &parent)

			hook := mustHook(t)
			first, err := hook(req, testNow.Add(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			second, err := hook(req, testNow.Add(48*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(st, decodeStatus(t, first)); diff != "" {
				t.Errorf("%s\nstatus must be a fixed point: -want +got:\n%s", sc.reason, diff)
			}
			if diff := cmp.Diff(string(first.Status), string(second.Status)); diff != "" {
				t.Errorf("%s\nstatus must not depend on now when nothing changed: -first +second:\n%s", sc.reason, diff)
			}
		})
	}
}
