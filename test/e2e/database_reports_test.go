package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/discovery"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDatabaseInstanceReports is high availability as far as it happens in
// the API server: the reporters publish the instances' reports on their
// pods with the token of the hook's ServiceAccount <n>-instance (the real
// `metahooks instance-report` binary, one per pod, reading report files as
// scripts/instance.sh writes them), the hook reads them back through
// Metacontroller's related pods, and a failover moves the record and the
// read-write Service. The test plays the StatefulSet controller (it makes
// the pods from the template), the kubelet (the pods' Ready conditions)
// and PostgreSQL (the report files); the PostgreSQL side of the same
// failover runs in hooks/database/failover_postgres_test.go.
//
// It also checks that the Role is as narrow as promised: the token may patch
// the status of the Database's pods and nothing else.
func TestDatabaseInstanceReports(t *testing.T) {
	ns := createNamespace(t, "database-reports")
	manifest := strings.Replace(readExample(t, "database-ha.yaml"), "  instances: 3\n", "  instances: 3\n  failoverDelaySeconds: 5\n", 1)
	parent := createParent(t, haDatabaseController, ns, manifest)
	name := parent.GetName()
	settle(t, haDatabaseController, ns, name, "instances 3")

	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
		t.Fatal(err)
	}
	if got := sts.Spec.Template.Spec.ServiceAccountName; got != name+"-instance" {
		t.Fatalf("pod template serviceAccountName %q, want %s-instance", got, name)
	}
	pods := make([]string, 3)
	for i := range pods {
		pods[i] = fmt.Sprintf("%s-%d", name, i)
		createInstancePod(t, sts, i)
		setPodReady(t, ns, pods[i], true)
	}
	bystander := createInstancePod(t, sts, -1)

	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	writeTestFile(t, caFile, string(apiConfig.CAData))
	installInstancePolicy(t)

	// The Role lets <n>-instance patch pods/status of <n>-0 … <n>-8, nothing
	// else; the policy of deploy/ narrows that to the pod a token is bound
	// to, and to the role label and example.com/ annotations of its
	// metadata. A token bound to <n>-1, as the kubelet projects it:
	token := instanceToken(t, ns, name+"-instance", pods[1])
	asInstance := instanceClient(t)
	own := "/api/v1/namespaces/" + ns + "/pods/" + pods[1] + "/status"
	// The policy takes a moment to reach the API server's admission.
	waitFor(t, "the instance policy in force", 2*time.Minute, func() bool {
		return asInstance.do(t, http.MethodPatch, "/api/v1/namespaces/"+ns+"/pods/"+pods[0]+"/status", token, `{"metadata":{"annotations":{"example.com/probe":"x"}}}`) == http.StatusForbidden
	})
	for _, tc := range []struct {
		reason, method, path, body string
		token                      string // "" is the token bound to <n>-1
		want                       int
	}{
		{reason: "its own report: what the reporter does", method: http.MethodPatch, path: own, body: `{"metadata":{"labels":{"example.com/role":"standby"},"annotations":{"example.com/probe":"x"}}}`, want: http.StatusOK},
		{reason: "its own report removed", method: http.MethodPatch, path: own, body: `{"metadata":{"annotations":{"example.com/probe":null}}}`, want: http.StatusOK},
		{reason: "another instance's pod (the primary's)", method: http.MethodPatch, path: "/api/v1/namespaces/" + ns + "/pods/" + pods[0] + "/status", body: `{"metadata":{"annotations":{"example.com/lsn":"F/FFFFFFFF"}}}`, want: http.StatusForbidden},
		{reason: "a label a selector might read", method: http.MethodPatch, path: own, body: `{"metadata":{"labels":{"app":"other"}}}`, want: http.StatusForbidden},
		{reason: "the StatefulSet's pod-name label, which the read-write Service selects on", method: http.MethodPatch, path: own, body: `{"metadata":{"labels":{"statefulset.kubernetes.io/pod-name":"` + pods[0] + `"}}}`, want: http.StatusForbidden},
		{reason: "the hook's own labels", method: http.MethodPatch, path: own, body: `{"metadata":{"labels":{"app.kubernetes.io/component":null}}}`, want: http.StatusForbidden},
		{reason: "an annotation outside example.com/", method: http.MethodPatch, path: own, body: `{"metadata":{"annotations":{"e2e.example.com/probe":"x"}}}`, want: http.StatusForbidden},
		{reason: "a finalizer", method: http.MethodPatch, path: own, body: `{"metadata":{"finalizers":["example.com/hold"]}}`, want: http.StatusForbidden},
		{reason: "status.podIPs (what Endpoints route to)", method: http.MethodPatch, path: own, body: `{"status":{"podIP":"10.99.0.9","podIPs":[{"ip":"10.99.0.9"}]}}`, want: http.StatusForbidden},
		{reason: "a pod condition (Ready: what the Services and the failover read)", method: http.MethodPatch, path: own, body: `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`, want: http.StatusForbidden},
		{reason: "a token of the account bound to no pod", method: http.MethodPatch, path: own, body: `{"metadata":{"annotations":{"example.com/probe":"x"}}}`, token: instanceToken(t, ns, name+"-instance", ""), want: http.StatusForbidden},
		{reason: "not the pod itself: its spec (image, command) stays out of reach", method: http.MethodPatch, path: "/api/v1/namespaces/" + ns + "/pods/" + pods[1], body: `{"metadata":{"annotations":{"example.com/probe":"x"}}}`, want: http.StatusForbidden},
		{reason: "no pod but the Database's own", method: http.MethodPatch, path: "/api/v1/namespaces/" + ns + "/pods/" + bystander + "/status", body: `{"metadata":{"annotations":{"example.com/probe":"x"}}}`, want: http.StatusForbidden},
		{reason: "no reads at all", method: http.MethodGet, path: "/api/v1/namespaces/" + ns + "/pods/" + pods[1], want: http.StatusForbidden},
		{reason: "no Secrets", method: http.MethodGet, path: "/api/v1/namespaces/" + ns + "/secrets/" + name + "-superuser", want: http.StatusForbidden},
	} {
		bearer := cmp.Or(tc.token, token)
		if got := asInstance.do(t, tc.method, tc.path, bearer, tc.body); got != tc.want {
			t.Errorf("%s: %s %s %s as %s-instance answered %d, want %d", tc.reason, tc.method, tc.path, tc.body, name, got, tc.want)
		}
	}
	// None of the refused patches changed the pod.
	after := &corev1.Pod{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: pods[1]}, after); err != nil {
		t.Fatal(err)
	}
	if after.Labels["app"] != "" || after.Labels[appsv1.StatefulSetPodNameLabel] != pods[1] || after.Annotations["e2e.example.com/probe"] != "" || len(after.Finalizers) != 0 || after.Status.PodIP != "" {
		t.Errorf("pod %s after the refused patches: labels %v, annotations %v, finalizers %v, podIP %q", pods[1], after.Labels, after.Annotations, after.Finalizers, after.Status.PodIP)
	}

	// One reporter per pod, as the reporter container runs it.
	reports := make([]string, 3)
	for i, pod := range pods {
		reports[i] = filepath.Join(dir, pod, "report")
		if err := os.MkdirAll(filepath.Join(dir, pod, "topology"), 0o755); err != nil {
			t.Fatal(err)
		}
		tokenFile := filepath.Join(dir, pod, "token")
		writeTestFile(t, tokenFile, instanceToken(t, ns, name+"-instance", pod))
		startReporter(t, ns, pod, reports[i], filepath.Join(dir, pod, "topology"), tokenFile, caFile)
	}
	writeReport := func(i int, role string, timeline int, lsn string, receiving bool, epoch int) {
		t.Helper()
		content := fmt.Sprintf("example.com/role=%s\nexample.com/timeline=%d\nexample.com/lsn=%s\nexample.com/receiving=%v\nexample.com/epoch=%d\nexample.com/reported-at=%s\n",
			role, timeline, lsn, receiving, epoch, time.Now().UTC().Format(time.RFC3339))
		writeTestFile(t, reports[i]+".tmp", content)
		if err := os.Rename(reports[i]+".tmp", reports[i]); err != nil {
			t.Fatal(err)
		}
	}
	written := time.Now()
	writeReport(0, "primary", 1, "0/3000060", false, 0)
	writeReport(1, "standby", 1, "0/3000060", true, 0)
	writeReport(2, "standby", 1, "0/3000060", true, 0)
	for i, want := range []string{"primary", "standby", "standby"} {
		waitForPod(t, ns, pods[i], fmt.Sprintf("role %s published", want), func(p *corev1.Pod) bool {
			return p.Labels["example.com/role"] == want && p.Annotations["example.com/lsn"] == "0/3000060"
		})
	}
	version := serverVersion(t)
	recordFigure(t, fmt.Sprintf("figure: Kubernetes %s, instance reports: three reports on their pods %s after they were written", version, seconds(time.Since(written))))

	// With standbys that say they stream, backups move to <n>-ro: the
	// CronJob is the one child that changes.
	_, w := haDatabaseController.sync(t, ns, name, false)
	if len(w.created)+len(w.deleted) != 0 || len(w.updated) != 1 || !strings.HasPrefix(w.updated[0], "CronJob.batch/v1 "+name+"-backup") {
		t.Errorf("the reports made Metacontroller write %s; want only the backup CronJob updated (dumps from a standby)", w)
	}
	status := haDatabaseController.get(t, ns, name).Object["status"].(map[string]any)
	for i, inst := range status["instances"].([]any) {
		want := []string{"primary, timeline 1", "standby streaming, timeline 1", "standby streaming, timeline 1"}[i]
		if got := inst.(map[string]any)["state"]; got != want {
			t.Errorf("status.instances[%d].state = %v, want %q (the published report)", i, got, want)
		}
	}
	ro := &corev1.Service{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name + "-ro"}, ro); err != nil {
		t.Fatal(err)
	}
	selected := &corev1.PodList{}
	if err := k8s.List(testContext(t), selected, client.InNamespace(ns), client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(ro.Spec.Selector)}); err != nil {
		t.Fatal(err)
	}
	var roPods []string
	for _, p := range selected.Items {
		roPods = append(roPods, p.Name)
	}
	if strings.Join(roPods, ",") != pods[1]+","+pods[2] {
		t.Errorf("Service %s-ro selects %v, want the two standbys", name, roPods)
	}

	// The primary's node dies: not Ready (the kubelet's part). The hook
	// counts failoverDelaySeconds from its own first sight of it (kept in
	// the record), then fences the record under epoch 1.
	down := setPodReady(t, ns, pods[0], false)
	record := &corev1.ConfigMap{}
	syncUntil := func(what string, done func() bool) time.Duration {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			haDatabaseController.sync(t, ns, name, false)
			if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name + "-topology"}, record); err != nil {
				t.Fatal(err)
			}
			if done() {
				return time.Since(down)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not 2 min after the primary went not Ready; record %v; status %v", what, record.Data, haDatabaseController.get(t, ns, name).Object["status"])
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	fenced := syncUntil("a fence", func() bool {
		if record.Data["primary"] != pods[0] {
			t.Fatalf("the record names %s before any standby reported the fence", record.Data["primary"])
		}
		return record.Data["fenced"] == "true"
	})
	if fenced < 5*time.Second {
		t.Fatalf("fenced %s after the primary went down, before failoverDelaySeconds (5 s)", fenced)
	}
	if record.Data["epoch"] != "1" {
		t.Errorf("the fence's epoch is %q, want 1", record.Data["epoch"])
	}
	// The standbys act on it (receivers stopped, all WAL replayed) and say
	// so with the epoch; orders-2 received further.
	writeReport(1, "standby", 1, "0/3000100", false, 1)
	writeReport(2, "standby", 1, "0/3000200", false, 1)
	for _, i := range []int{1, 2} {
		waitForPod(t, ns, pods[i], "the standby's final report published", func(p *corev1.Pod) bool {
			return p.Annotations["example.com/epoch"] == "1"
		})
	}
	published := time.Since(down)
	elapsed := syncUntil("a failover", func() bool { return record.Data["primary"] != pods[0] })
	recordFigure(t, fmt.Sprintf("figure: Kubernetes %s, instance reports: fenced %s after the primary went not Ready (failoverDelaySeconds 5), the standbys' final reports on their pods after %s, promotion decided after %s",
		version, seconds(fenced), seconds(published), seconds(elapsed)))
	if record.Data["primary"] != pods[2] || record.Data["reason"] != "Failover" || record.Data["previousPrimary"] != pods[0] {
		t.Errorf("record %v; want primary %s (the standby furthest along), reason Failover, previousPrimary %s", record.Data, pods[2], pods[0])
	}
	events := &eventsv1.EventList{}
	if err := k8s.List(testContext(t), events, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var failoverEvents []string
	for _, e := range events.Items {
		if e.Regarding.Kind == "Database" && e.Regarding.Name == name && e.Regarding.UID == parent.GetUID() && e.Reason == "Failover" && e.Type == corev1.EventTypeWarning {
			failoverEvents = append(failoverEvents, e.Name+": "+e.Note)
		}
	}
	if len(failoverEvents) != 1 || !strings.Contains(failoverEvents[0], pods[2]+" promoted") {
		t.Errorf("Events about the Database: %v; want one Warning Failover naming %s", failoverEvents, pods[2])
	}
	rw := &corev1.Service{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, rw); err != nil {
		t.Fatal(err)
	}
	if got := rw.Spec.Selector[appsv1.StatefulSetPodNameLabel]; got != pods[2] {
		t.Errorf("read-write Service selects %q after the failover, want %s", got, pods[2])
	}

	// The new primary promotes itself on the record and says so; the status
	// follows, and once settled nothing is written.
	writeReport(2, "primary", 2, "0/3000300", false, 2)
	waitForPod(t, ns, pods[2], "the promoted primary's report published", func(p *corev1.Pod) bool {
		return p.Labels["example.com/role"] == "primary"
	})
	settle(t, haDatabaseController, ns, name, "after the failover")
	status = haDatabaseController.get(t, ns, name).Object["status"].(map[string]any)
	if status["currentPrimary"] != pods[2] {
		t.Errorf("status.currentPrimary = %v, want %s", status["currentPrimary"], pods[2])
	}
}

// serverVersion is the first control plane's kube-apiserver version.
func serverVersion(t *testing.T) string {
	t.Helper()
	info, err := discovery.NewDiscoveryClientForConfigOrDie(apiConfig).ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	return info.GitVersion
}

// createInstancePod makes pod <sts>-<ordinal> from the template, as the
// StatefulSet controller would (ordinal -1: a pod of the same template that
// is not one of the StatefulSet's ordinals); it returns the name.
func createInstancePod(t *testing.T, sts *appsv1.StatefulSet, ordinal int) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", sts.Name, ordinal)
	if ordinal < 0 {
		name = sts.Name + "-bystander"
	}
	l := map[string]string{appsv1.StatefulSetPodNameLabel: name}
	for k, v := range sts.Spec.Template.Labels {
		l[k] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sts.Namespace, Labels: l, Annotations: sts.Spec.Template.Annotations},
		Spec:       *sts.Spec.Template.Spec.DeepCopy(),
	}
	for _, vct := range sts.Spec.VolumeClaimTemplates {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: vct.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: vct.Name + "-" + name},
		}})
	}
	if err := k8s.Create(testContext(t), pod); err != nil {
		t.Fatalf("the API server rejected pod %s made from the StatefulSet's template: %v", name, err)
	}
	return name
}

// setPodReady plays the kubelet: the pod's Ready condition, changed now. It
// returns the lastTransitionTime as stored.
func setPodReady(t *testing.T, namespace, name string, ready bool) time.Time {
	t.Helper()
	pod := &corev1.Pod{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: name}, pod); err != nil {
		t.Fatal(err)
	}
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Phase = corev1.PodRunning
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}}
	if err := k8s.Status().Update(testContext(t), pod); err != nil {
		t.Fatalf("cannot set pod %s Ready=%v: %v", name, ready, err)
	}
	return pod.Status.Conditions[0].LastTransitionTime.Time
}

// instanceToken is a token of the ServiceAccount bound to pod (as the
// kubelet projects it into the reporter container: TokenRequest with the
// pod as bound object, which puts the pod's name in the token's user
// extra); pod "": a token bound to nothing.
func instanceToken(t *testing.T, namespace, account, pod string) string {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: account}}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	if pod != "" {
		p := &corev1.Pod{}
		if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: pod}, p); err != nil {
			t.Fatal(err)
		}
		req.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod, UID: p.UID}
	}
	if err := k8s.SubResource("token").Create(testContext(t), sa, req); err != nil {
		t.Fatalf("cannot get a token of ServiceAccount %s (the hook's child) bound to pod %q: %v", account, pod, err)
	}
	return req.Status.Token
}

// installInstancePolicy applies deploy/validatingadmissionpolicy.yaml, as
// `kubectl apply -k deploy` does, until the test ends.
func installInstancePolicy(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repo, "deploy", "validatingadmissionpolicy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objects := decodeObjects(t, raw)
	if len(objects) != 2 {
		t.Fatalf("deploy/validatingadmissionpolicy.yaml holds %d objects, want the policy and its binding", len(objects))
	}
	for _, obj := range objects {
		if err := k8s.Patch(testContext(t), obj, client.Apply, client.ForceOwnership, client.FieldOwner("e2e-deploy"), client.FieldValidation("Strict")); err != nil {
			t.Fatalf("%s %s: the API server rejects it: %v", obj.GetKind(), obj.GetName(), err)
		}
	}
	t.Cleanup(func() {
		for _, obj := range objects {
			if err := k8s.Delete(context.Background(), obj); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cannot delete %s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
	})
}

// instanceHTTP calls the first control plane with a bearer token.
type instanceHTTP struct{ client *http.Client }

func instanceClient(t *testing.T) instanceHTTP {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(apiConfig.CAData) {
		t.Fatal("the API server's CA is not PEM")
	}
	return instanceHTTP{client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}}
}

func (c instanceHTTP) do(t *testing.T, method, path, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, strings.TrimSuffix(apiConfig.Host, "/")+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := c.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode
}

// startReporter runs `metahooks instance-report` for one pod until the test
// ends (its log is printed if the test fails).
func startReporter(t *testing.T, namespace, pod, report, topology, tokenFile, caFile string) {
	t.Helper()
	var log bytes.Buffer
	cmd := exec.Command(metahooksBinary, "instance-report", "--pod", pod, "--namespace", namespace,
		"--report-file", report, "--topology-dir", topology, "--api-server", apiConfig.Host,
		"--token-file", tokenFile, "--ca-file", caFile, "--poll", "100ms", "--heartbeat", "2s")
	cmd.Stdout, cmd.Stderr = &log, &log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Its peak resident size, after polling and patching for the test.
		if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
			for line := range strings.Lines(string(status)) {
				if strings.HasPrefix(line, "VmHWM:") {
					t.Logf("reporter of %s: %s", pod, strings.Join(strings.Fields(line), " "))
				}
			}
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		if t.Failed() || err != nil {
			t.Logf("reporter of %s (exit %v):\n%s", pod, err, log.String())
		}
		if err != nil {
			t.Errorf("the reporter of %s did not exit 0 on SIGTERM: %v", pod, err)
		}
	})
}

// waitForPod polls the pod until ok holds (at most 15 s).
func waitForPod(t *testing.T, namespace, name, what string, ok func(*corev1.Pod) bool) {
	t.Helper()
	waitFor(t, "pod "+name+": "+what, 15*time.Second, func() bool {
		pod := &corev1.Pod{}
		return k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: name}, pod) == nil && ok(pod)
	})
}

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
