package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
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
// strict server-side apply dry run (an unknown field is an error); the
// top-level compositecontroller.yaml too. Every CompositeController hook must
// come back from the API server calling HTTPS with a caBundle and a bearer
// token (checkWebhookAuth).
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
		if err := k8s.Patch(testContext(t), obj, client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner("e2e-deploy"), client.FieldValidation("Strict")); err != nil {
			t.Errorf("%s %s: the API server rejects it: %v", obj.GetKind(), obj.GetName(), err)
			continue
		}
		if obj.GetKind() == "CompositeController" {
			checkWebhookAuth(t, obj)
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

// checkWebhookAuth checks every hook of a CompositeController as the API
// server returned it: HTTPS to port 443, the CA from the Secret metahooks-tls
// (ca.crt), a bearer token from a Secret in Metacontroller's namespace.
func checkWebhookAuth(t *testing.T, cc *unstructured.Unstructured) {
	t.Helper()
	hooks, _, _ := unstructured.NestedMap(cc.Object, "spec", "hooks")
	if len(hooks) == 0 {
		t.Errorf("CompositeController %s has no hooks", cc.GetName())
	}
	for name := range hooks {
		want := map[string]string{
			"service.protocol":                  "https",
			"service.port":                      "443",
			"caBundle.secretRef.name":           "metahooks-tls",
			"caBundle.secretRef.namespace":      "metahooks",
			"caBundle.secretRef.key":            "ca.crt",
			"authorization.type":                "Bearer",
			"authorization.secretRef.name":      "metahooks-hook-token",
			"authorization.secretRef.namespace": "metacontroller",
			"authorization.secretRef.key":       "token",
		}
		for path, value := range want {
			fields := append([]string{"spec", "hooks", name, "webhook"}, strings.Split(path, ".")...)
			got, found, _ := unstructured.NestedFieldNoCopy(cc.Object, fields...)
			if !found || fmt.Sprint(got) != value {
				t.Errorf("CompositeController %s hook %s: webhook.%s = %v (found %v), want %s", cc.GetName(), name, path, got, found, value)
			}
		}
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

// TestCertManagerComponent renders deploy/ with components/cert-manager, as
// deploy/README.md step 3a has it, from an overlay outside deploy/: the
// serving Certificate writes the Secret the Deployment mounts and the
// caBundle reads, for the name Metacontroller dials. (cert-manager's CRDs are
// not installed in the test API server: this is a render check only.)
func TestCertManagerComponent(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl (for kustomize) is not on PATH: %v", err)
	}
	overlay := t.TempDir()
	deploy, err := filepath.Rel(overlay, filepath.Join(repo, "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + deploy + "\ncomponents:\n- " + deploy + "/components/cert-manager\n"
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	rendered, err := exec.Command(kubectl, "kustomize", overlay).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize with components/cert-manager: %v: %s", err, rendered)
	}
	var serving *unstructured.Unstructured
	for _, obj := range decodeObjects(t, rendered) {
		if obj.GetKind() == "Certificate" && obj.GetName() == "metahooks-tls" {
			serving = obj
		}
	}
	if serving == nil {
		t.Fatal("no Certificate metahooks-tls rendered")
	}
	secret, _, _ := unstructured.NestedString(serving.Object, "spec", "secretName")
	names, _, _ := unstructured.NestedStringSlice(serving.Object, "spec", "dnsNames")
	issuer, _, _ := unstructured.NestedString(serving.Object, "spec", "issuerRef", "name")
	if secret != "metahooks-tls" || !slices.Contains(names, "metahooks.metahooks") || !slices.Contains(names, "metahooks.metahooks.svc") || issuer != "metahooks-ca" {
		t.Errorf("Certificate metahooks-tls: secretName %q, dnsNames %v, issuer %q; want metahooks-tls, the Service's names (metahooks.metahooks first of all), the CA issuer", secret, names, issuer)
	}
}
