package composite

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dbv1 "metahooks/api/v1"
	"metahooks/api/v1alpha1"
)

var (
	myAppKind    = v1alpha1.GroupVersion.WithKind("MyApp")
	databaseKind = dbv1.GroupVersion.WithKind("Database")
)

// TestDecodeParent checks whole errors, type and message: each names its
// field exactly once, for both parents alike.
func TestDecodeParent(t *testing.T) {
	cases := map[string]struct {
		reason string
		raw    string
		into   func() Parent
		want   schema.GroupVersionKind
		err    error // nil: decodes
	}{
		"MyApp": {
			reason: "a MyApp of the right kind decodes",
			raw:    `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"demo"},"spec":{"replicaCount":3}}`,
			into:   func() Parent { return &v1alpha1.MyApp{} },
			want:   myAppKind,
		},
		"MyAppWrongType": {
			reason: "the captured failure: a string where an integer belongs, the path named once",
			raw:    `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","spec":{"replicaCount":"three"}}`,
			into:   func() Parent { return &v1alpha1.MyApp{} },
			want:   myAppKind,
			err:    &InvalidError{Field: "spec.replicaCount", Reason: "wrong type: got a JSON string, want int32"},
		},
		"DatabaseWrongType": {
			reason: "Database used to say spec.size twice",
			raw:    `{"apiVersion":"example.com/v1","kind":"Database","spec":{"size":3}}`,
			into:   func() Parent { return &dbv1.Database{} },
			want:   databaseKind,
			err:    &InvalidError{Field: "spec.size", Reason: "wrong type: got a JSON number, want v1.DatabaseSize"},
		},
		"DatabaseNestedWrongType": {
			reason: "a nested path is named whole",
			raw:    `{"apiVersion":"example.com/v1","kind":"Database","spec":{"backup":{"retention":"7"}}}`,
			into:   func() Parent { return &dbv1.Database{} },
			want:   databaseKind,
			err:    &InvalidError{Field: "spec.backup.retention", Reason: "wrong type: got a JSON string, want int32"},
		},
		"MalformedQuantity": {
			reason: "the decoder gives a malformed quantity no path; it is found by walking the type, and named once",
			raw:    `{"apiVersion":"example.com/v1","kind":"Database","spec":{"storage":"lots"}}`,
			into:   func() Parent { return &dbv1.Database{} },
			want:   databaseKind,
			err:    &InvalidError{Field: "spec.storage", Reason: malformedQuantity},
		},
		"MalformedQuantityInMap": {
			reason: "a quantity inside a ResourceList is named by its key",
			raw:    `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","spec":{"image":"x","resources":{"limits":{"cpu":"1","memory":"lots"}}}}`,
			into:   func() Parent { return &v1alpha1.MyApp{} },
			want:   myAppKind,
			err:    &InvalidError{Field: `spec.resources.limits["memory"]`, Reason: malformedQuantity},
		},
		"DuplicateKey": {
			reason: "a key given twice is refused, not last-one-wins: the request is malformed (400, as README says), the schema is not broken",
			raw:    `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","spec":{"image":"x","replicaCount":1,"replicaCount":5}}`,
			into:   func() Parent { return &v1alpha1.MyApp{} },
			want:   myAppKind,
			err:    &RequestError{Field: "parent.spec.replicaCount", Reason: "duplicate key: a key may appear only once in an object"},
		},
		"OtherKindWithBadField": {
			reason: "the kind is checked before any field: a MyApp on the Database route is a wrong kind, not a bad quantity",
			raw:    `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","spec":{"storage":{"size":"1Gi"}}}`,
			into:   func() Parent { return &dbv1.Database{} },
			want:   databaseKind,
			err:    &RequestError{Field: "parent", Reason: `this hook serves example.com/v1 Database, got apiVersion "example.com/v1alpha1" kind "MyApp"`},
		},
		"OtherKind": {
			reason: "a Database sent to the MyApp hook is a bad request, not a MyApp with every field missing",
			raw:    `{"apiVersion":"example.com/v1","kind":"Database","spec":{"size":"small"}}`,
			into:   func() Parent { return &v1alpha1.MyApp{} },
			want:   myAppKind,
			err:    &RequestError{Field: "parent", Reason: `this hook serves example.com/v1alpha1 MyApp, got apiVersion "example.com/v1" kind "Database"`},
		},
		"UnparsableAPIVersion": {
			reason: "the apiVersion is quoted as sent, even when it does not parse",
			raw:    `{"apiVersion":"a/b/c","kind":"MyApp"}`,
			into:   func() Parent { return &v1alpha1.MyApp{} },
			want:   myAppKind,
			err:    &RequestError{Field: "parent", Reason: `this hook serves example.com/v1alpha1 MyApp, got apiVersion "a/b/c" kind "MyApp"`},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := DecodeParent([]byte(tc.raw), tc.into(), tc.want)
			if diff := cmp.Diff(tc.err, err); diff != "" {
				t.Errorf("%s\nDecodeParent(%s): error -want +got:\n%s", tc.reason, tc.raw, diff)
			}
			if tc.err != nil {
				if diff := cmp.Diff(tc.err.Error(), err.Error()); diff != "" {
					t.Errorf("%s\nDecodeParent(%s): message -want +got:\n%s", tc.reason, tc.raw, diff)
				}
			}
		})
	}
}

// TestCheckParentMeta: a parent's name and namespace are bounded at the API
// server's limits before any hook uses them, the length first, and a bad
// value is quoted by its prefix alone.
func TestCheckParentMeta(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	for _, tc := range []struct {
		reason          string
		name, namespace string
		err             error // nil: accepted
	}{
		{reason: "a usual name and namespace", name: "demo", namespace: "apps"},
		{reason: "empty ones are the hook's to refuse, saying why it needs them"},
		{reason: "a 253-character name and a 63-character namespace are the API server's limits", name: long(253), namespace: long(63)},
		{reason: "a 254-character name is refused by its length", name: long(254), namespace: "apps",
			err: &InvalidError{Field: "metadata.name", Reason: `must be at most 253 characters, got 254: "` + long(64) + `"…(254 bytes)`}},
		{reason: "a 7 MiB name is quoted by 64 bytes", name: long(7 << 20), namespace: "apps",
			err: &InvalidError{Field: "metadata.name", Reason: `must be at most 253 characters, got 7340032: "` + long(64) + `"…(7340032 bytes)`}},
		{reason: "a name the API server would refuse", name: "Demo_1", namespace: "apps",
			err: &InvalidError{Field: "metadata.name", Reason: `must be a DNS-1123 subdomain (a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')), got "Demo_1"`}},
		{reason: "a 64-character namespace is refused by its length", name: "demo", namespace: long(64),
			err: &InvalidError{Field: "metadata.namespace", Reason: `must be at most 63 characters, got 64: "` + long(64) + `"`}},
		{reason: "a 7 MiB namespace, once copied into every child, is refused", name: "demo", namespace: long(7 << 20),
			err: &InvalidError{Field: "metadata.namespace", Reason: `must be at most 63 characters, got 7340032: "` + long(64) + `"…(7340032 bytes)`}},
		{reason: "a namespace with a dot is no DNS-1123 label", name: "demo", namespace: "a.b",
			err: &InvalidError{Field: "metadata.namespace", Reason: `must be a DNS-1123 label (must not contain dots), got "a.b"`}},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var want, got any = tc.err, CheckParentMeta(tc.name, tc.namespace)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("CheckParentMeta (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeParentChecksMeta: both decode paths (the prefetched parent and
// DecodeObject) check the name and namespace.
func TestDecodeParentChecksMeta(t *testing.T) {
	raw := []byte(`{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"demo","namespace":"` + strings.Repeat("a", 64) + `"},"spec":{"image":"x"}}`)
	err := DecodeParent(raw, &v1alpha1.MyApp{}, myAppKind)
	var invalid *InvalidError
	if !errors.As(err, &invalid) || invalid.Field != "metadata.namespace" {
		t.Errorf("DecodeParent = %v, want an InvalidError of metadata.namespace", err)
	}
	body := []byte(`{"parent":` + string(raw) + `,"children":{}}`)
	req, err := DecodeRequestPrefetching(body, NewPrefetch[v1alpha1.MyApp](nil))
	if err != nil {
		t.Fatal(err)
	}
	err = req.DecodeParent(&v1alpha1.MyApp{}, myAppKind)
	if !errors.As(err, &invalid) || invalid.Field != "metadata.namespace" {
		t.Errorf("prefetched DecodeParent = %v, want an InvalidError of metadata.namespace", err)
	}
}
