package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
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
	objects := kustomize(t, filepath.Join(repo, "deploy"))
	top, err := os.ReadFile(filepath.Join(repo, "compositecontroller.yaml"))
	if err != nil {
		t.Fatal(err)
	}
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
		if obj.GetKind() == "CompositeController" && obj.GetName() == "database-controller" {
			checkDatabaseChildResources(t, obj)
		}
	}
	if image := instanceAgentImage(t, objects); image != "metahooks:dev" {
		t.Errorf("deploy/ renders the Deployment's image as %q, want metahooks:dev (kustomization.yaml images:)", image)
	}
	for _, kind := range []string{"Namespace", "CustomResourceDefinition", "CompositeController", "Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if kinds[kind] == 0 {
			t.Errorf("deploy/ renders no %s", kind)
		}
	}
	if kinds["CompositeController"] != 4 || kinds["CustomResourceDefinition"] != 2 {
		t.Errorf("want 2 CompositeControllers in each of deploy/ and compositecontroller.yaml and 2 CRDs, got %v", kinds)
	}
}

// checkDatabaseChildResources checks that the Database CompositeController, as
// the API server returned it, lists the children of spec.instances >= 2 that
// give the reporter container its identity, each updated in place: a kind
// missing from childResources is still created but never observed, so never
// updated or deleted (when instances drops to 1) by Metacontroller.
func checkDatabaseChildResources(t *testing.T, cc *unstructured.Unstructured) {
	t.Helper()
	children, _, _ := unstructured.NestedSlice(cc.Object, "spec", "childResources")
	strategies := map[string]string{}
	for _, child := range children {
		c, _ := child.(map[string]any)
		apiVersion, _, _ := unstructured.NestedString(c, "apiVersion")
		resource, _, _ := unstructured.NestedString(c, "resource")
		method, _, _ := unstructured.NestedString(c, "updateStrategy", "method")
		strategies[apiVersion+" "+resource] = method
	}
	for child, want := range map[string]string{"v1 serviceaccounts": "InPlace", "rbac.authorization.k8s.io/v1 roles": "InPlace",
		"rbac.authorization.k8s.io/v1 rolebindings": "InPlace", "events.k8s.io/v1 events": "OnDelete"} {
		if got, found := strategies[child]; !found || got != want {
			t.Errorf("CompositeController %s: childResources %s: updateStrategy %q (listed %v), want listed with %s", cc.GetName(), child, got, found, want)
		}
	}
}

// TestDeployInstanceAgentImage renders deploy/ with another image set the two
// ways deploy/README.md offers (images: in deploy/kustomization.yaml, as
// `kustomize edit set image` writes it, and images: in an overlay outside
// deploy/) and checks that serve's --instance-agent-image names the very
// image the container runs, so Database pods never run a reporter of another
// build.
func TestDeployInstanceAgentImage(t *testing.T) {
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := []struct {
		name    string
		reason  string
		overlay bool   // images: in an overlay of deploy/, else in a copy of deploy/kustomization.yaml
		images  string // the images: entry's fields after name: metahooks
		want    string
	}{
		{
			name:   "tag in deploy",
			reason: "kustomize edit set image metahooks=registry.example.com/metahooks:v1.2.3",
			images: "  newName: registry.example.com/metahooks\n  newTag: v1.2.3\n",
			want:   "registry.example.com/metahooks:v1.2.3",
		},
		{
			name:   "digest in deploy",
			reason: "an image pinned by digest (kustomize edit set image metahooks=...@sha256:...) keeps the digest in both places",
			images: "  newName: registry.example.com/team/metahooks\n  digest: " + digest + "\n",
			want:   "registry.example.com/team/metahooks@" + digest,
		},
		{
			name:   "tag and digest in deploy",
			reason: "tag and digest together are passed on as the full reference",
			images: "  newName: registry.example.com:5000/metahooks\n  newTag: v2\n  digest: " + digest + "\n",
			want:   "registry.example.com:5000/metahooks:v2@" + digest,
		},
		{
			name:    "tag in an overlay",
			reason:  "an overlay's images: must reach the env var too, not only the container's image",
			overlay: true,
			images:  "  newName: registry.example.com/overlay/metahooks\n  newTag: v3\n",
			want:    "registry.example.com/overlay/metahooks:v3",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(filepath.Join(dir, "deploy"), os.DirFS(filepath.Join(repo, "deploy"))); err != nil {
				t.Fatal(err)
			}
			render := filepath.Join(dir, "deploy")
			entry := "- name: metahooks\n" + tc.images
			if tc.overlay {
				render = filepath.Join(dir, "overlay")
				overlay := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- ../deploy\nimages:\n" + entry
				if err := os.Mkdir(render, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(render, "kustomization.yaml"), []byte(overlay), 0o600); err != nil {
					t.Fatal(err)
				}
			} else {
				path := filepath.Join(dir, "deploy", "kustomization.yaml")
				kustomization, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				const defaultEntry = "- name: metahooks\n  newName: metahooks\n  newTag: dev\n"
				if !bytes.Contains(kustomization, []byte(defaultEntry)) {
					t.Fatalf("deploy/kustomization.yaml has no images: entry %q to replace", defaultEntry)
				}
				if err := os.WriteFile(path, bytes.Replace(kustomization, []byte(defaultEntry), []byte(entry), 1), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := instanceAgentImage(t, kustomize(t, render)); got != tc.want {
				t.Errorf("image %q, want %q (%s)", got, tc.want, tc.reason)
			}
		})
	}
}

// instanceAgentImage returns the image of container metahooks of the
// Deployment metahooks after checking that serve's --instance-agent-image,
// with $(VAR) expanded from the container's env as the kubelet does, is the
// same reference.
func instanceAgentImage(t *testing.T, objects []*unstructured.Unstructured) string {
	t.Helper()
	var deployment *appsv1.Deployment
	for _, obj := range objects {
		if obj.GetKind() == "Deployment" && obj.GetName() == "metahooks" {
			deployment = &appsv1.Deployment{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, deployment); err != nil {
				t.Fatal(err)
			}
		}
	}
	if deployment == nil {
		t.Fatal("no Deployment metahooks rendered")
	}
	i := slices.IndexFunc(deployment.Spec.Template.Spec.Containers, func(c corev1.Container) bool { return c.Name == "metahooks" })
	if i < 0 {
		t.Fatal("Deployment metahooks has no container metahooks")
	}
	container := deployment.Spec.Template.Spec.Containers[i]
	env := map[string]string{}
	for _, e := range container.Env {
		if e.ValueFrom == nil {
			env[e.Name] = e.Value
		}
	}
	var flags []string
	for j, arg := range container.Args {
		switch {
		case strings.HasPrefix(arg, "--instance-agent-image="):
			flags = append(flags, strings.TrimPrefix(arg, "--instance-agent-image="))
		case arg == "--instance-agent-image" && j+1 < len(container.Args):
			flags = append(flags, container.Args[j+1])
		}
	}
	if len(flags) != 1 || slices.Index(container.Args, "serve") != 0 {
		t.Fatalf("container metahooks args %q: want serve with --instance-agent-image once", container.Args)
	}
	if got := expandEnv(flags[0], env); got != container.Image {
		t.Errorf("container metahooks: --instance-agent-image %q is %q, want the container's image %q", flags[0], got, container.Image)
	}
	return container.Image
}

// expandEnv replaces every $(NAME) in s by env[NAME], as the kubelet expands
// a container's args; an unknown name stays as written.
func expandEnv(s string, env map[string]string) string {
	return regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)`).ReplaceAllStringFunc(s, func(ref string) string {
		if value, ok := env[ref[2:len(ref)-1]]; ok {
			return value
		}
		return ref
	})
}

// kustomize renders a kustomization folder with kubectl kustomize (a local
// render, no API call).
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl (for kustomize) is not on PATH: %v", err)
	}
	rendered, err := exec.Command(kubectl, "kustomize", dir).Output()
	if err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			t.Fatalf("kubectl kustomize %s: %v: %s", dir, err, exitErr.Stderr)
		}
		t.Fatal(err)
	}
	return decodeObjects(t, rendered)
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

// withComponent renders deploy/ with deploy/components/<component> from an
// overlay outside deploy/, as deploy/README.md has users do it.
func withComponent(t *testing.T, component string) []*unstructured.Unstructured {
	t.Helper()
	overlay := t.TempDir()
	deploy, err := filepath.Rel(overlay, filepath.Join(repo, "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	kustomization := "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- " + deploy + "\ncomponents:\n- " + deploy + "/components/" + component + "\n"
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		t.Fatal(err)
	}
	return kustomize(t, overlay)
}

// TestCertManagerComponent renders deploy/ with components/cert-manager, as
// deploy/README.md step 3a has it, from an overlay outside deploy/: the
// serving Certificate writes the Secret the Deployment mounts and the
// caBundle reads, for the name Metacontroller dials. (cert-manager's CRDs are
// not installed in the test API server: this is a render check only.)
func TestCertManagerComponent(t *testing.T) {
	var serving *unstructured.Unstructured
	for _, obj := range withComponent(t, "cert-manager") {
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

// TestMetricsTokenComponent renders deploy/ with components/metrics-token from
// an overlay outside deploy/, as deploy/README.md has it: the Deployment must
// pass --metrics-auth-token-file a path that is the tokens item of the Secret
// metahooks-metrics-token, mounted without subPath (so the kubelet's updates,
// and with them revocation, reach the pod), and the API server must accept
// the patched Deployment (strict server-side apply dry run).
func TestMetricsTokenComponent(t *testing.T) {
	var rendered *unstructured.Unstructured
	for _, obj := range withComponent(t, "metrics-token") {
		if obj.GetKind() == "Deployment" && obj.GetName() == "metahooks" {
			rendered = obj
		}
	}
	if rendered == nil {
		t.Fatal("no Deployment metahooks rendered")
	}
	deployment := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(rendered.Object, deployment); err != nil {
		t.Fatal(err)
	}
	spec := deployment.Spec.Template.Spec
	i := slices.IndexFunc(spec.Containers, func(c corev1.Container) bool { return c.Name == "metahooks" })
	if i < 0 {
		t.Fatal("Deployment metahooks has no container metahooks")
	}
	container := spec.Containers[i]
	flag := slices.Index(container.Args, "--metrics-auth-token-file")
	if flag < 0 || flag+1 >= len(container.Args) {
		t.Fatalf("container metahooks args %q: no --metrics-auth-token-file with a value", container.Args)
	}
	path := container.Args[flag+1]
	found := false
	for _, mount := range container.VolumeMounts {
		rel, err := filepath.Rel(mount.MountPath, path)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue
		}
		v := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Name == mount.Name })
		if v < 0 || spec.Volumes[v].Secret == nil {
			t.Errorf("--metrics-auth-token-file %s is in volume %q, which is not a Secret volume", path, mount.Name)
			continue
		}
		secret := spec.Volumes[v].Secret
		item := slices.IndexFunc(secret.Items, func(k corev1.KeyToPath) bool { return k.Path == rel })
		switch {
		case secret.SecretName != "metahooks-metrics-token":
			t.Errorf("--metrics-auth-token-file %s is in Secret %q, want metahooks-metrics-token", path, secret.SecretName)
		case item < 0 || secret.Items[item].Key != "tokens":
			t.Errorf("--metrics-auth-token-file %s is not the item tokens of Secret metahooks-metrics-token (items %v)", path, secret.Items)
		case mount.SubPath != "":
			t.Errorf("--metrics-auth-token-file %s is mounted with subPath %q: the kubelet never updates it, so a revoked token stays", path, mount.SubPath)
		case !mount.ReadOnly:
			t.Errorf("--metrics-auth-token-file %s is mounted read-write", path)
		default:
			found = true
		}
	}
	if !found {
		t.Errorf("--metrics-auth-token-file %s is not in a volume mount of Secret metahooks-metrics-token", path)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: rendered.GetNamespace()}}
	if err := k8s.Create(testContext(t), ns); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	if err := k8s.Patch(testContext(t), rendered, client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner("e2e-deploy"), client.FieldValidation("Strict")); err != nil {
		t.Errorf("Deployment metahooks with components/metrics-token: the API server rejects it: %v", err)
	}
}

// TestReadmeOverlay: step 5 of deploy/README.md, as printed: the overlay it
// writes with a heredoc, once as printed and once with step 4a's component
// lines uncommented, renders with your image in both places (the
// Deployment and --instance-agent-image), and without the component the API
// server takes every object (strict server-side dry run). Issue 31: step 5
// needed the kustomize binary, and step 4a applied before step 5 set the
// image.
func TestReadmeOverlay(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repo, "deploy", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	const begin = "mkdir -p my-metahooks && cat > my-metahooks/kustomization.yaml <<'YAML'\n"
	_, rest, found := strings.Cut(string(readme), begin)
	overlay, _, closed := strings.Cut(rest, "\nYAML\n")
	if !found || !closed {
		t.Fatalf("deploy/README.md has no heredoc %q ... YAML", begin)
	}
	for _, tc := range []struct {
		name, reason, kustomization string
		certificate                 bool
	}{
		{"AsPrinted", "the overlay as printed", overlay + "\n", false},
		{"WithCertManager", "step 4a: its two components lines uncommented", strings.NewReplacer("# components:", "components:", "# - ../deploy/components/cert-manager", "- ../deploy/components/cert-manager").Replace(overlay) + "\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(filepath.Join(dir, "deploy"), os.DirFS(filepath.Join(repo, "deploy"))); err != nil {
				t.Fatal(err)
			}
			if err := os.Mkdir(filepath.Join(dir, "my-metahooks"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "my-metahooks", "kustomization.yaml"), []byte(tc.kustomization), 0o600); err != nil {
				t.Fatal(err)
			}
			objects := kustomize(t, filepath.Join(dir, "my-metahooks"))
			const want = "registry.example.com/metahooks:v1.2.3"
			if got := instanceAgentImage(t, objects); got != want {
				t.Errorf("%s: --instance-agent-image %q, want %q", tc.reason, got, want)
			}
			certificate := false
			for _, obj := range objects {
				if obj.GetKind() == "Deployment" && obj.GetName() == "metahooks" {
					containers, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
					if len(containers) == 0 || containers[0].(map[string]any)["image"] != want {
						t.Errorf("%s: the Deployment runs %v, want %s", tc.reason, containers, want)
					}
				}
				certificate = certificate || obj.GetKind() == "Certificate"
			}
			if certificate != tc.certificate {
				t.Errorf("%s: a Certificate rendered: %v, want %v", tc.reason, certificate, tc.certificate)
			}
			if tc.certificate {
				return // cert-manager's CRDs are not in the test API server
			}
			for _, obj := range objects {
				if obj.GetNamespace() != "" {
					ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: obj.GetNamespace()}}
					if err := k8s.Create(testContext(t), ns); err != nil && !apierrors.IsAlreadyExists(err) {
						t.Fatal(err)
					}
				}
				if err := k8s.Patch(testContext(t), obj, client.Apply, client.DryRunAll, client.ForceOwnership, client.FieldOwner("e2e-readme"), client.FieldValidation("Strict")); err != nil {
					t.Errorf("%s: %s %s: %v", tc.reason, obj.GetKind(), obj.GetName(), err)
				}
			}
		})
	}
}
