package myapp

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/composite"
)

func TestCustomize(t *testing.T) {
	podsOfDemo := []composite.RelatedResourceRule{{
		APIVersion: "v1", Resource: "pods", Namespace: "apps",
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
			"app.kubernetes.io/name": "myapp", "app.kubernetes.io/instance": "demo", "app.kubernetes.io/component": "server",
		}},
	}}
	cases := map[string]struct {
		reason string
		spec   map[string]any
		want   []composite.RelatedResourceRule
	}{
		"NoRestore": {reason: "nothing to watch: Metacontroller then watches no pods for it", spec: baseSpec(), want: []composite.RelatedResourceRule{}},
		"Restore":   {reason: "a restoring MyApp's server pods, in its namespace", spec: withSpec(map[string]any{"restoreFrom": "latest"}), want: podsOfDemo},
		"BadSpec":   {reason: "a spec the sync hook refuses still gets an answer", spec: map[string]any{"restoreFrom": "latest", "replicaCount": -4}, want: podsOfDemo},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Customize(&composite.CustomizeRequest{Parent: parentJSON(t, tc.spec, nil)})
			if err != nil {
				t.Fatalf("%s\nCustomize: %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, got.RelatedResources); diff != "" {
				t.Errorf("%s\nCustomize: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCustomizeRejects(t *testing.T) {
	cases := map[string]struct {
		reason string
		parent string
		want   error
	}{
		"WrongKind":   {reason: "a Database is not a MyApp", parent: `{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","namespace":"b"}}`, want: &composite.RequestError{}},
		"NoNamespace": {reason: "MyApp is namespaced", parent: `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"}}`, want: &composite.InvalidError{}},
		"NotObject":   {reason: "metadata of the wrong shape breaks the schema", parent: `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":[]}`, want: &composite.InvalidError{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Customize(&composite.CustomizeRequest{Parent: []byte(tc.parent)})
			var request *composite.RequestError
			var invalid *composite.InvalidError
			ok := false
			switch tc.want.(type) {
			case *composite.RequestError:
				ok = errors.As(err, &request)
			case *composite.InvalidError:
				ok = errors.As(err, &invalid)
			}
			if !ok {
				t.Errorf("%s\nCustomize(%s) = %v (%T), want %T", tc.reason, tc.parent, err, err, tc.want)
			}
		})
	}
}
