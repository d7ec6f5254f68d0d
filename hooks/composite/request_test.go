package composite

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestDecodeRequest(t *testing.T) {
	cases := map[string]struct {
		reason    string
		body      string
		wantField string // "" with wantErr false: success
		wantErr   bool
	}{
		"Minimal": {
			reason: "a parent and an empty children map is a whole request",
			body:   `{"parent":{"kind":"MyApp"},"children":{},"finalizing":false}`,
		},
		"Empty":            {reason: "no body", body: ``, wantErr: true, wantField: "body"},
		"NotJSON":          {reason: "malformed JSON", body: `{"parent":`, wantErr: true, wantField: "body"},
		"Array":            {reason: "a JSON array is not a request", body: `[1,2]`, wantErr: true, wantField: "body"},
		"MissingParent":    {reason: "parent is required", body: `{"children":{}}`, wantErr: true, wantField: "parent"},
		"NullParent":       {reason: "parent null is missing", body: `{"parent":null}`, wantErr: true, wantField: "parent"},
		"ParentNotObject":  {reason: "parent must be an object", body: `{"parent":"demo"}`, wantErr: true, wantField: "parent"},
		"ChildrenAsList":   {reason: "children is a map of maps, not a list (the A2Y mistake)", body: `{"parent":{},"children":[{}]}`, wantErr: true, wantField: "children"},
		"FinalizingString": {reason: "finalizing is a boolean", body: `{"parent":{},"finalizing":"yes"}`, wantErr: true, wantField: "finalizing"},
		"NullChild": {reason: "Metacontroller never sends a null child, whatever its kind", body: `{"parent":{},"children":{"Service.v1":{"demo":null}}}`,
			wantErr: true, wantField: `children["Service.v1"]["demo"]`},
		"EmptyChild": {reason: "a child without metadata is no observed object", body: `{"parent":{},"children":{"ConfigMap.v1":{"demo-config":{}}}}`,
			wantErr: true, wantField: `children["ConfigMap.v1"]["demo-config"].metadata.name`},
		"ChildNameNotString": {reason: "metadata.name is a string", body: `{"parent":{},"children":{"ConfigMap.v1":{"demo-config":{"metadata":{"name":5}}}}}`,
			wantErr: true, wantField: `children["ConfigMap.v1"]["demo-config"].metadata.name`},
		"ChildMetadataNotObject": {reason: "metadata is an object", body: `{"parent":{},"children":{"ConfigMap.v1":{"demo-config":{"metadata":"x"}}}}`,
			wantErr: true, wantField: `children["ConfigMap.v1"]["demo-config"].metadata`},
		"RelatedWithoutName": {reason: "related objects follow the same rule", body: `{"parent":{},"related":{"Pod.v1":{"p":{"metadata":{"namespace":"a"}}}}}`,
			wantErr: true, wantField: `related["Pod.v1"]["p"].metadata.name`},
		"NamedChildren": {reason: "children of every kind with their names are fine, read or not",
			body: `{"parent":{},"children":{"Service.v1":{"demo":{"apiVersion":"v1","kind":"Service","metadata":{"name":"demo","labels":{"a":"b"}},"spec":{}}}}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeRequest([]byte(tc.body))
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\nDecodeRequest(%q): error = %v, want error %v", tc.reason, tc.body, err, tc.wantErr)
			}
			if err == nil {
				return
			}
			var requestErr *RequestError
			if !errors.As(err, &requestErr) {
				t.Fatalf("%s\nDecodeRequest(%q): error %T, want *RequestError", tc.reason, tc.body, err)
			}
			if diff := cmp.Diff(tc.wantField, requestErr.Field); diff != "" {
				t.Errorf("%s\nDecodeRequest(%q): field -want +got:\n%s", tc.reason, tc.body, diff)
			}
		})
	}
}

func TestObserved(t *testing.T) {
	configMap := json.RawMessage(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo","namespace":"apps"},"data":{"k":"v"}}`)
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	cases := map[string]struct {
		reason    string
		children  ChildMap
		wantFound bool
		wantData  map[string]string
		wantErr   bool
	}{
		"V1Key":      {reason: "hook version v1 keys children by name", children: ChildMap{"ConfigMap.v1": {"demo": configMap}}, wantFound: true, wantData: map[string]string{"k": "v"}},
		"V2Key":      {reason: "hook version v2 keys children by namespace/name", children: ChildMap{"ConfigMap.v1": {"apps/demo": configMap}}, wantFound: true, wantData: map[string]string{"k": "v"}},
		"Absent":     {reason: "an empty type map means not observed", children: ChildMap{"ConfigMap.v1": {}}},
		"NoTypeKey":  {reason: "a missing type key means not observed", children: ChildMap{}},
		"OtherName":  {reason: "only the named child counts", children: ChildMap{"ConfigMap.v1": {"other": configMap}}},
		"WrongShape": {reason: "a child that does not decode is a bad request", children: ChildMap{"ConfigMap.v1": {"demo": json.RawMessage(`{"data":["x"]}`)}}, wantErr: true},
	}
	for name, tc := range cases {
		// Related objects have the shape of children and the same keys.
		lookups := map[string]func(*Request, *corev1.ConfigMap) (bool, error){
			"Observed": func(r *Request, into *corev1.ConfigMap) (bool, error) {
				r.Children = tc.children
				return r.Observed(gvk, "apps", "demo", into)
			},
			"ObservedRelated": func(r *Request, into *corev1.ConfigMap) (bool, error) {
				r.Related = tc.children
				return r.ObservedRelated(gvk, "apps", "demo", into)
			},
		}
		for lookupName, lookup := range lookups {
			t.Run(name+"/"+lookupName, func(t *testing.T) {
				var got corev1.ConfigMap
				found, err := lookup(&Request{}, &got)
				if (err != nil) != tc.wantErr {
					t.Fatalf("%s\n%s(...): error = %v, want error %v", tc.reason, lookupName, err, tc.wantErr)
				}
				if found != tc.wantFound {
					t.Errorf("%s\n%s(...): found = %v, want %v", tc.reason, lookupName, found, tc.wantFound)
				}
				if diff := cmp.Diff(tc.wantData, got.Data); found && diff != "" {
					t.Errorf("%s\n%s(...): data -want +got:\n%s", tc.reason, lookupName, diff)
				}
			})
		}
	}
}

func TestObservedRelatedErrorNamesRelated(t *testing.T) {
	req := &Request{Related: ChildMap{"ConfigMap.v1": {"demo": json.RawMessage(`{"data":["x"]}`)}}}
	_, err := req.ObservedRelated(corev1.SchemeGroupVersion.WithKind("ConfigMap"), "apps", "demo", &corev1.ConfigMap{})
	var requestErr *RequestError
	if !errors.As(err, &requestErr) || requestErr.Field != `related["ConfigMap.v1"]["demo"].data` {
		t.Errorf("ObservedRelated error %#v, want a *RequestError on related[\"ConfigMap.v1\"][\"demo\"].data", err)
	}
}

func TestHasRelated(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("PersistentVolumeClaim")
	cases := map[string]struct {
		reason  string
		related ChildMap
		want    bool
	}{
		"Empty":        {reason: "a rule that matched nothing still sends its type key", related: ChildMap{"PersistentVolumeClaim.v1": {}}, want: true},
		"Objects":      {reason: "objects of the type", related: ChildMap{"PersistentVolumeClaim.v1": {"a": json.RawMessage(`{}`)}}, want: true},
		"NoCustomize":  {reason: "no customize hook: related is {}", related: ChildMap{}},
		"OtherType":    {reason: "only the asked type counts", related: ChildMap{"Secret.v1": {}}},
		"NilMap":       {reason: "related omitted", related: nil},
		"OtherVersion": {reason: "the version is part of the key", related: ChildMap{"PersistentVolumeClaim.v2": {}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := (&Request{Related: tc.related}).HasRelated(gvk); got != tc.want {
				t.Errorf("%s\nHasRelated = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

func TestRelatedKeys(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("Pod")
	cases := map[string]struct {
		reason  string
		related ChildMap
		want    []string
	}{
		"V1":          {reason: "v1 keys, sorted", related: ChildMap{"Pod.v1": {"b": json.RawMessage(`{"metadata":{"name":"b","namespace":"ns"}}`), "a": json.RawMessage(`{"metadata":{"name":"a","namespace":"ns"}}`)}}, want: []string{"a", "b"}},
		"V2":          {reason: "v2 keys as sent", related: ChildMap{"Pod.v1": {"ns/z": json.RawMessage(`{"metadata":{"name":"z","namespace":"ns"}}`), "ns/a": json.RawMessage(`{"metadata":{"name":"a","namespace":"ns"}}`)}}, want: []string{"ns/a", "ns/z"}},
		"OtherType":   {reason: "only the asked type", related: ChildMap{"Secret.v1": {"a": json.RawMessage(`{"metadata":{"name":"a","namespace":"ns"}}`)}}, want: []string{}},
		"NoCustomize": {reason: "related omitted", related: nil, want: []string{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &Request{Related: tc.related}
			got := req.RelatedKeys(gvk)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRelatedKeys -want +got:\n%s", tc.reason, diff)
			}
			for _, key := range got {
				var pod corev1.Pod
				if found, err := req.ObservedRelated(gvk, "ns", key, &pod); !found || err != nil {
					t.Errorf("%s\nObservedRelated does not find key %q: %v", tc.reason, key, err)
				}
			}
		})
	}
}

func TestDecodeCustomizeRequest(t *testing.T) {
	cases := map[string]struct {
		reason    string
		body      string
		wantField string // "" means success
	}{
		"Whole":           {reason: "controller and parent", body: `{"controller":{"kind":"CompositeController"},"parent":{"kind":"Database"}}`},
		"ParentOnly":      {reason: "the controller is not needed", body: `{"parent":{"kind":"Database"}}`},
		"Empty":           {reason: "no body", body: ``, wantField: "body"},
		"NotObject":       {reason: "a JSON array", body: `[]`, wantField: "body"},
		"MissingParent":   {reason: "parent is required", body: `{"controller":{}}`, wantField: "parent"},
		"ParentNotObject": {reason: "parent must be an object", body: `{"parent":"db"}`, wantField: "parent"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req, err := DecodeCustomizeRequest([]byte(tc.body))
			if tc.wantField == "" {
				if err != nil || len(req.Parent) == 0 {
					t.Fatalf("%s\nDecodeCustomizeRequest(%q) = %v, %v", tc.reason, tc.body, req, err)
				}
				return
			}
			var requestErr *RequestError
			if !errors.As(err, &requestErr) || requestErr.Field != tc.wantField {
				t.Errorf("%s\nDecodeCustomizeRequest(%q): error %v, want a *RequestError on %s", tc.reason, tc.body, err, tc.wantField)
			}
		})
	}
}

func TestTypeKey(t *testing.T) {
	cases := map[string]struct {
		reason string
		gvk    schema.GroupVersionKind
		want   string
	}{
		"CoreGroup":   {reason: "the core group has no group part", gvk: schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}, want: "ConfigMap.v1"},
		"NamedGroup":  {reason: "other groups are Kind.group/version", gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "StatefulSet"}, want: "StatefulSet.apps/v1"},
		"DottedGroup": {reason: "groups may hold dots; the kind never does", gvk: schema.GroupVersionKind{Group: "policy.example.com", Version: "v1", Kind: "Thing"}, want: "Thing.policy.example.com/v1"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := TypeKey(tc.gvk); got != tc.want {
				t.Errorf("%s\nTypeKey(%v) = %q, want %q", tc.reason, tc.gvk, got, tc.want)
			}
		})
	}
}

func TestCheckKind(t *testing.T) {
	want := schema.GroupVersionKind{Group: "example.com", Version: "v1alpha1", Kind: "MyApp"}
	if err := CheckKind("example.com/v1alpha1", "MyApp", want); err != nil {
		t.Errorf("CheckKind(the served kind) = %v, want nil", err)
	}
	for _, got := range [][2]string{{"example.com/v1", "Database"}, {"example.com/v1", "MyApp"}, {"", ""}} {
		var requestErr *RequestError
		if err := CheckKind(got[0], got[1], want); !errors.As(err, &requestErr) || requestErr.Field != "parent" {
			t.Errorf("CheckKind(%q, %q) = %v, want a *RequestError on parent", got[0], got[1], err)
		}
	}
}

func TestObservedAs(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("ConfigMap")
	req := &Request{Children: ChildMap{"ConfigMap.v1": {"demo": json.RawMessage(`{"metadata":{"name":"demo"},"data":{"k":"v"}}`)}}}
	got, err := ObservedAs[corev1.ConfigMap](req, gvk, "apps", "demo")
	if err != nil || got == nil || got.Data["k"] != "v" {
		t.Errorf("ObservedAs(observed) = %v, %v; want the decoded ConfigMap", got, err)
	}
	if absent, err := ObservedAs[corev1.ConfigMap](req, gvk, "apps", "other"); absent != nil || err != nil {
		t.Errorf("ObservedAs(absent) = %v, %v; want nil, nil", absent, err)
	}
	req.Children["ConfigMap.v1"]["bad"] = json.RawMessage(`{"data":["x"]}`)
	if bad, err := ObservedAs[corev1.ConfigMap](req, gvk, "apps", "bad"); bad != nil || err == nil {
		t.Errorf("ObservedAs(malformed) = %v, %v; want nil and an error", bad, err)
	}
}

// TestObservedRefusesWhatMetacontrollerNeverSends: a child that is null, not
// an object, or has no metadata.name is a bad request naming the child, not a
// child that is present with every field empty.
func TestObservedRefusesWhatMetacontrollerNeverSends(t *testing.T) {
	gvk := corev1.SchemeGroupVersion.WithKind("Secret")
	const key = `children["Secret.v1"]["demo-credentials"]`
	cases := map[string]struct {
		reason string
		raw    string
		want   error
	}{
		"Null":        {reason: "null is no child", raw: `null`, want: &RequestError{Field: key, Reason: "must be an object (the observed child), got null"}},
		"Array":       {reason: "an array is no child", raw: `[]`, want: &RequestError{Field: key, Reason: "must be an object (the observed child), got an array"}},
		"EmptyObject": {reason: "{} would give a desired Secret with no data", raw: `{}`, want: &RequestError{Field: key + ".metadata.name", Reason: "required: an observed child always has its metadata"}},
		"NoName":      {reason: "metadata without a name", raw: `{"metadata":{"namespace":"apps"},"data":{}}`, want: &RequestError{Field: key + ".metadata.name", Reason: "required: an observed child always has its metadata"}},
		"DuplicateKey": {reason: "a key given twice", raw: `{"metadata":{"name":"demo-credentials"},"data":{"p":"eA==","p":"eQ=="}}`,
			want: &RequestError{Field: key + `.data.p`, Reason: "duplicate key: a key may appear only once in an object"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := &Request{Children: ChildMap{"Secret.v1": {"demo-credentials": json.RawMessage(tc.raw)}}}
			found, err := req.Observed(gvk, "apps", "demo-credentials", &corev1.Secret{})
			if found {
				t.Errorf("%s: found a child", tc.reason)
			}
			if diff := cmp.Diff(tc.want, err); diff != "" {
				t.Errorf("%s: error -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestDecodeCustomizeRequestMatchesSlowDecoder: DecodeCustomizeRequest gives
// what the slow path of DecodeRequest gives, for every kept request and for
// bodies the scan leaves to it: a customize request is read as any hook
// request is, so one body gets one answer whichever path reads it.
func TestDecodeCustomizeRequestMatchesSlowDecoder(t *testing.T) {
	bodies := requestFiles(t)
	for name, body := range map[string]string{
		"children of the wrong shape are refused": `{"parent":{"kind":"Database"},"children":5}`,
		"finalizing of the wrong type":            `{"parent":{"kind":"Database"},"finalizing":"yes"}`,
		"controller null":                         `{"parent":{"kind":"Database"},"controller":null}`,
		"repeated parent":                         `{"parent":{},"parent":{"kind":"Database"}}`,
	} {
		bodies[name] = []byte(body)
	}
	for name, body := range bodies {
		var want *CustomizeRequest
		slow, wantErr := decodeRequestSlow(body, nil, nil)
		if wantErr == nil {
			want = &CustomizeRequest{Controller: slow.Controller, Parent: slow.Parent}
		}
		got, err := DecodeCustomizeRequest(body)
		if diff := cmp.Diff(fmt.Sprint(wantErr), fmt.Sprint(err)); diff != "" {
			t.Errorf("%s: DecodeCustomizeRequest error -slow +scan:\n%s", name, diff)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: DecodeCustomizeRequest -slow +scan:\n%s", name, diff)
		}
	}
}
