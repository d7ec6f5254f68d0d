package e2e

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDeployDryRun renders deploy/ with kustomize (kubectl kustomize: a local
// render, no API call) and has the API server check every object with a
// server-side apply dry run; the top-level compositecontroller.yaml too.
func TestDeployDryRun(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl (for kustomize) is not on PATH: %v", err)
	}
	rendered, err := exec.Command(kubectl, "kustomize", filepath.Join(repo, "deploy")).Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Fatalf("kubectl kustomize deploy: %v: %s", err, exitErr.Stderr)
		}
		t.Fatal(err)
	}
	top, err := os.ReadFile(filepath.Join(repo, "compositecontroller.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objects := decodeObjects(t, rendered)
	kinds := map[string]int{}
	for _, obj := range append(objects, decodeObjects(t, top)...) {
		kinds[obj.GetKind()]++
		if obj.GetKind() == "Namespace" {
			// Namespaced objects are only checked inside an existing namespace.
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: obj.GetName()}}
			if err := k8s.Create(testContext(t), ns); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatal(err)
			}
		}
	}
	for _, obj := range append(objects, decodeObjects(t, top)...) {
		if err := k8s.Patch(testContext(t), obj, client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner("e2e-deploy")); err != nil {
			t.Errorf("%s %s: the API server rejects it: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	for _, kind := range []string{"Namespace", "CustomResourceDefinition", "CompositeController", "Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy"} {
		if kinds[kind] == 0 {
			t.Errorf("deploy/ renders no %s", kind)
		}
	}
	if kinds["CompositeController"] != 4 || kinds["CustomResourceDefinition"] != 2 {
		t.Errorf("want 2 CompositeControllers in each of deploy/ and compositecontroller.yaml and 2 CRDs, got %v", kinds)
	}
}

func decodeObjects(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := decoder.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}
