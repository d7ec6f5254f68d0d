package composite

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func configMap(name string) *corev1.ConfigMap {
	return &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: name}}
}

func TestNewResponse(t *testing.T) {
	service := &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	sts := &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: metav1.ObjectMeta{Name: "a"}}
	cases := map[string]struct {
		reason       string
		children     []runtime.Object
		wantChildren []string // kind/name in order
		wantErr      bool
	}{
		"Sorted": {
			reason:       "children come out sorted by apiVersion, kind, name, whatever order the builders ran in",
			children:     []runtime.Object{service, configMap("b"), sts, configMap("a")},
			wantChildren: []string{"StatefulSet/a", "ConfigMap/a", "ConfigMap/b", "Service/a"},
		},
		"SkipsNil": {
			reason:       "a builder's nil (typed or not) means not wanted",
			children:     []runtime.Object{configMap("a"), (*policyv1.PodDisruptionBudget)(nil), nil},
			wantChildren: []string{"ConfigMap/a"},
		},
		"Duplicate": {
			reason:   "two children with one identity would silently replace each other",
			children: []runtime.Object{configMap("a"), configMap("a")},
			wantErr:  true,
		},
		"Empty": {
			reason:       "no children is an empty list, never null",
			wantChildren: []string{},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := NewResponse(map[string]any{"ok": true}, tc.children...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\nNewResponse(...): error = %v, want error %v", tc.reason, err, tc.wantErr)
			}
			if err != nil {
				return
			}
			names := []string{}
			for _, child := range got.Children {
				names = append(names, child.Kind+"/"+child.Name)
			}
			if diff := cmp.Diff(tc.wantChildren, names); diff != "" {
				t.Errorf("%s\nNewResponse(...) children: -want +got:\n%s", tc.reason, diff)
			}
			raw, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			var wire map[string]any
			if err := json.Unmarshal(raw, &wire); err != nil {
				t.Fatal(err)
			}
			if _, ok := wire["children"].([]any); !ok {
				t.Errorf("%s\nresponse JSON children = %v, want a list", tc.reason, wire["children"])
			}
			if _, ok := wire["finalized"]; ok {
				t.Errorf("%s\nresponse JSON has finalized on a sync answer: %s", tc.reason, raw)
			}
		})
	}
}

func TestNewFinalizeResponse(t *testing.T) {
	cases := map[string]struct {
		reason string
		done   bool
		want   string
	}{
		"Waiting": {
			reason: "until done the children stay and Metacontroller is asked to call again",
			want:   `{"status":{"phase":"going"},"children":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}],"resyncAfterSeconds":30}`,
		},
		"Done": {
			reason: "once done: finalized, no children, no resync",
			done:   true,
			want:   `{"status":{"phase":"going"},"children":[],"finalized":true}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := NewFinalizeResponse(tc.done, 30, map[string]string{"phase": "going"}, configMap("a"))
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(raw)); diff != "" {
				t.Errorf("%s\nNewFinalizeResponse: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestChildJSON: a child goes on the wire as its apply JSON, and a response
// read back keeps each child's identity.
func TestChildJSON(t *testing.T) {
	cm := configMap("a")
	cm.Namespace = "apps"
	sent, err := NewResponse(map[string]any{}, cm, &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"}, ObjectMeta: metav1.ObjectMeta{Name: "a"}})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(sent)
	if err != nil {
		t.Fatal(err)
	}
	wantWire := `{"status":{},"children":[` + string(sent.Children[0].JSON) + "," + string(sent.Children[1].JSON) + `]}`
	if diff := cmp.Diff(wantWire, string(raw)); diff != "" {
		t.Errorf("wire form: -want +got:\n%s", diff)
	}
	var got Response
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sent.Children, got.Children); diff != "" {
		t.Errorf("children read back: -sent +got:\n%s", diff)
	}
	keys := []string{}
	for _, c := range got.Children {
		keys = append(keys, c.TypeKey())
	}
	if diff := cmp.Diff([]string{"StatefulSet.apps/v1", "ConfigMap.v1"}, keys); diff != "" {
		t.Errorf("TypeKey: -want +got:\n%s", diff)
	}
}

// TestAppendJSONIsMarshal: AppendJSON writes the bytes json.Marshal writes,
// for sync and finalize answers alike.
func TestAppendJSONIsMarshal(t *testing.T) {
	sync, err := NewResponse(map[string]any{"ready": true, "note": "<&>"}, configMap("b"), configMap("a"))
	if err != nil {
		t.Fatal(err)
	}
	waiting, err := NewFinalizeResponse(false, 5, map[string]any{"phase": "Deleting"}, configMap("a"))
	if err != nil {
		t.Fatal(err)
	}
	done, err := NewFinalizeResponse(true, 5, nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]*Response{
		"sync":             sync,
		"finalize waiting": waiting,
		"finalize done":    done,
		"fractional resync, no status, nil children": {ResyncAfterSeconds: 0.25},
		"empty children": {Status: json.RawMessage(`{}`), Children: []Child{}},
	}
	for name, response := range cases {
		want, err := json.Marshal(response)
		if err != nil {
			t.Fatal(err)
		}
		got, err := response.AppendJSON(nil)
		if err != nil {
			t.Fatalf("%s: AppendJSON: %v", name, err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s: AppendJSON -json.Marshal +got:\n%s", name, diff)
		}
	}
	if _, err := (&Response{Children: []Child{{Kind: "ConfigMap", Name: "x"}}}).AppendJSON(nil); err == nil {
		t.Error("AppendJSON of a child without JSON succeeded")
	}
}

// TestNewResponseJSONMatchesEncodeChild: the children NewResponse writes into
// its one buffer are, byte for byte, what EncodeChild and Clean write alone,
// each child's JSON capped at its own end, and the status after them.
func TestNewResponseJSONMatchesEncodeChild(t *testing.T) {
	children := []runtime.Object{configMap("b"), configMap("a"), &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{"x": "y"}}}}
	status := map[string]any{"phase": "Running", "empty": map[string]any{}}
	got, err := NewResponse(status, children...)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, child := range children {
		c, err := EncodeChild(child)
		if err != nil {
			t.Fatal(err)
		}
		want[c.Kind+"/"+c.Name] = string(c.JSON)
	}
	gotJSON := map[string]string{}
	for _, c := range got.Children {
		gotJSON[c.Kind+"/"+c.Name] = string(c.JSON)
		if len(c.JSON) != cap(c.JSON) {
			t.Errorf("%s/%s: JSON has room for %d more bytes: an append to it would write over the next child", c.Kind, c.Name, cap(c.JSON)-len(c.JSON))
		}
	}
	if diff := cmp.Diff(want, gotJSON); diff != "" {
		t.Errorf("children's JSON: -EncodeChild +NewResponse:\n%s", diff)
	}
	wantStatus, err := Clean(status)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(wantStatus), string(got.Status)); diff != "" {
		t.Errorf("status: -Clean +NewResponse:\n%s", diff)
	}
}

// TestResponseRelease: Release empties the response, so a use after it fails
// instead of reading a buffer a later response writes; an answer copied out
// before it stays as it was while later responses reuse the buffer.
func TestResponseRelease(t *testing.T) {
	first, err := NewResponse(map[string]any{"n": 1}, configMap("first"))
	if err != nil {
		t.Fatal(err)
	}
	answer, err := first.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	kept := string(answer)
	first.Release()
	first.Release() // a second Release does nothing
	if first.Status != nil || first.Children[0].JSON != nil {
		t.Errorf("after Release: status %q, child JSON %q; want both empty", first.Status, first.Children[0].JSON)
	}
	if _, err := first.AppendJSON(nil); err == nil {
		t.Error("AppendJSON after Release: no error; want the child without JSON refused")
	}
	for i := range 8 { // later responses, likely in the released buffer
		later, err := NewResponse(map[string]any{"n": i + 2}, configMap("later-with-a-longer-name"))
		if err != nil {
			t.Fatal(err)
		}
		later.Release()
	}
	if string(answer) != kept {
		t.Errorf("the answer copied before Release changed:\n got %s\nwant %s", answer, kept)
	}
	var unreleased Response
	unreleased.Release() // not made by NewResponse: nothing to give back
}
