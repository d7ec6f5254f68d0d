package composite

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestEncodeChild(t *testing.T) {
	cases := map[string]struct {
		reason  string
		obj     runtime.Object
		want    string
		wantErr bool
	}{
		"ConfigMapWithoutData": {
			reason: "nulls (creationTimestamp) and empty maps vanish; apiVersion, kind and name stay",
			obj: &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "demo-config", Namespace: "apps", Labels: map[string]string{}},
			},
			want: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo-config","namespace":"apps"}}`,
		},
		"StatefulSetDropsStatusAndTemplateTimestamps": {
			reason: "a typed StatefulSet marshals status and creationTimestamp: null in two places; none may reach the apply intent",
			obj: &appsv1.StatefulSet{
				TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
				ObjectMeta: metav1.ObjectMeta{Name: "demo"},
				Spec: appsv1.StatefulSetSpec{
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "x"}}}},
				},
				Status: appsv1.StatefulSetStatus{Replicas: 3},
			},
			want: `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"demo"},"spec":{"serviceName":"","template":{"spec":{"containers":[{"image":"x","name":"app"}]}}}}`,
		},
		"KeepsEmptyDirAndCanonicalQuantities": {
			reason: "emptyDir: {} asks for a volume, so it stays; quantities come out canonical (1000m is 1)",
			obj: &corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: "p"},
				Spec: corev1.PodSpec{
					Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
					Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{
						Limits: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1000m")},
					}}},
				},
			},
			want: `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","resources":{"limits":{"cpu":"1"}}}],"volumes":[{"emptyDir":{},"name":"tmp"}]}}`,
		},
		"MissingKind": {
			reason:  "Metacontroller needs apiVersion and kind to key a child",
			obj:     &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x"}},
			wantErr: true,
		},
		"MissingName": {
			reason:  "children are keyed by name; generateName is not supported",
			obj:     &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}},
			wantErr: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := EncodeChild(tc.obj)
			if (err != nil) != tc.wantErr {
				t.Fatalf("%s\nEncodeChild(...): error = %v, want error %v", tc.reason, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, string(got.JSON)); diff != "" {
				t.Errorf("%s\nEncodeChild(...): -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// goldenChildren are the children of every golden response in
// server/testdata/golden, each decoded into its typed k8s.io/api object
// next to the bytes the golden file has for it.
func goldenChildren(t testing.TB) (objs []runtime.Object, want [][]byte) {
	files, err := filepath.Glob("../../server/testdata/golden/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden responses: %v", err)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var response struct{ Children []json.RawMessage }
		if err := json.Unmarshal(raw, &response); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, child := range response.Children {
			var typeMeta metav1.TypeMeta
			if err := json.Unmarshal(child, &typeMeta); err != nil {
				t.Fatal(err)
			}
			obj, ok := typedFor(typeMeta.Kind + "." + typeMeta.APIVersion).(runtime.Object)
			if !ok {
				t.Fatalf("%s: a %s child; add its type to typedFor", file, typeMeta.Kind)
			}
			if err := json.Unmarshal(child, obj); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, child); err != nil {
				t.Fatal(err)
			}
			objs, want = append(objs, obj), append(want, compact.Bytes())
		}
	}
	return objs, want
}

// TestEncodeChildGivesTheGoldenBytes: every child of every golden response,
// decoded into its typed object and encoded again, comes out as the golden
// bytes, and as the old decode-prune-marshal encoder (referenceClean) wrote it.
func TestEncodeChildGivesTheGoldenBytes(t *testing.T) {
	objs, want := goldenChildren(t)
	for i, obj := range objs {
		got, err := EncodeChild(obj)
		if err != nil {
			t.Fatalf("EncodeChild(golden child %d): %v", i, err)
		}
		if diff := cmp.Diff(string(want[i]), string(got.JSON)); diff != "" {
			t.Errorf("EncodeChild(golden %s %s): -golden +got:\n%s", got.Kind, got.Name, diff)
		}
		marshalled, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		reference, err := referenceClean(marshalled, true)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(reference, got.JSON) {
			t.Errorf("EncodeChild(golden %s %s) differs from the reference encoder:\n got %s\nwant %s", got.Kind, got.Name, got.JSON, reference)
		}
	}
}

// BenchmarkEncodeChild encodes every child of every golden response once per
// operation (about 70 objects of 8 kinds) with each candidate encoder: the
// plan encoder EncodeChild uses, the two passes it replaced (encoding/json,
// then cleanJSON), and go-json-experiment/json in encoding/json's
// compatibility mode, then cleanJSON (json v2 writes struct fields in
// declaration order, so it too needs the sorting pass).
func BenchmarkEncodeChild(b *testing.B) {
	objs, want := goldenChildren(b)
	candidates := []struct {
		name   string
		encode func(runtime.Object) ([]byte, error)
	}{
		{"plan", func(obj runtime.Object) ([]byte, error) { return encodeTyped(obj, true) }},
		{"encoding-json+clean", func(obj runtime.Object) ([]byte, error) { return encodeClean(obj, true) }},
		{"json-v2-v1compat+clean", func(obj runtime.Object) ([]byte, error) {
			raw, err := jsonv2.Marshal(obj, jsonv1.DefaultOptionsV1(), jsonv2.Deterministic(true))
			if err != nil {
				return nil, err
			}
			return cleanJSON(nil, raw, true)
		}},
	}
	for _, c := range candidates {
		b.Run(c.name, func(b *testing.B) {
			for i, obj := range objs { // every candidate gives the golden bytes
				if got, err := c.encode(obj); err != nil || !bytes.Equal(got, want[i]) {
					b.Fatalf("%s: golden child %d: %v\n got %s\nwant %s", c.name, i, err, got, want[i])
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				for _, obj := range objs {
					if _, err := c.encode(obj); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(objs)), "ns/object")
		})
	}
}
