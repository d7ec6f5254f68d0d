package myapp

import (
	"encoding/json"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"metahooks/hooks/composite"
)

var testNow = time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)

// parentJSON builds a MyApp parent apps/demo with the given spec and status.
func parentJSON(t *testing.T, spec map[string]any, status map[string]any) json.RawMessage {
	t.Helper()
	parent := map[string]any{
		"apiVersion": "example.com/v1alpha1",
		"kind":       "MyApp",
		"metadata":   map[string]any{"name": "demo", "namespace": "apps", "uid": "0b5a3d1e-0000-4000-8000-000000000001", "generation": 3},
		"spec":       spec,
	}
	if status != nil {
		parent["status"] = status
	}
	raw, err := json.Marshal(parent)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// request builds a sync request with the given observed StatefulSet (nil: none).
func request(t *testing.T, spec map[string]any, status map[string]any, sts *appsv1.StatefulSet) *composite.Request {
	t.Helper()
	req := &composite.Request{
		Parent: parentJSON(t, spec, status),
		Children: composite.ChildMap{
			"StatefulSet.apps/v1": {},
			"Service.v1":          {},
			"ConfigMap.v1":        {},
		},
	}
	if sts != nil {
		raw, err := json.Marshal(sts)
		if err != nil {
			t.Fatal(err)
		}
		req.Children["StatefulSet.apps/v1"][sts.Name] = raw
	}
	return req
}

// observedFrom is the StatefulSet the hook asks for, as the API server
// and the StatefulSet controller would show it with the given status.
func observedFrom(t *testing.T, response *composite.Response, st appsv1.StatefulSetStatus) *appsv1.StatefulSet {
	t.Helper()
	for _, child := range response.Children {
		if child.Kind == "StatefulSet" {
			var sts appsv1.StatefulSet
			if err := json.Unmarshal(child.JSON, &sts); err != nil {
				t.Fatal(err)
			}
			sts.Generation = 1
			st.ObservedGeneration = 1
			sts.Status = st
			return &sts
		}
	}
	t.Fatal("no StatefulSet in the response")
	return nil
}

// childNames are the kinds and names of a response's children.
func childNames(t *testing.T, response *composite.Response) []string {
	t.Helper()
	names := []string{}
	for _, child := range response.Children {
		names = append(names, child.Kind+"/"+child.Name)
	}
	return names
}

// freshSelector is the selector of an app whose StatefulSet does not exist yet.
func freshSelector(a *app) map[string]string { return a.selector(&observed{}) }

// build is statefulSet for an app whose StatefulSet does not exist yet.
func build(a *app, replicas int32) *appsv1.StatefulSet {
	return statefulSet(a, &observed{}, freshSelector(a), replicas)
}

// observedFor is what observeChildren reads for a when the StatefulSet sts
// (nil: none) is the only observed child.
func observedFor(t *testing.T, a *app, sts *appsv1.StatefulSet) *observed {
	t.Helper()
	req := &composite.Request{Children: composite.ChildMap{"StatefulSet.apps/v1": {}}}
	if sts != nil {
		raw, err := json.Marshal(sts)
		if err != nil {
			t.Fatal(err)
		}
		req.Children["StatefulSet.apps/v1"][a.name] = raw
	}
	o, err := observeChildren(req, a)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func baseSpec() map[string]any {
	return map[string]any{"replicaCount": 2, "image": "registry.example/demo:1.0"}
}

func withSpec(changes map[string]any) map[string]any {
	spec := baseSpec()
	for k, v := range changes {
		spec[k] = v
	}
	return spec
}
