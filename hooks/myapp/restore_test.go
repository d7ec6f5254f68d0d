package myapp

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/api/v1alpha1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

func restoreEnv(data, backups, backup string) []string {
	return []string{"POD_NAME=demo-0", "DATA_DIR=" + data, "BACKUP_DIR=" + backups, "RESTORE_BACKUP=" + backup}
}

// archived runs the archive script on a data volume holding files, for the
// run scheduled at each of times in turn, and returns the backups volume.
func archived(t *testing.T, files map[string]string, times ...time.Time) string {
	t.Helper()
	data, backups := t.TempDir(), t.TempDir()
	writeTree(t, data, files)
	for _, at := range times {
		if out, code := runScript(t, archiveScript, archiveEnv(data, backups, at, 7)...); code != 0 {
			t.Fatalf("archive script exited %d:\n%s", code, out)
		}
	}
	return backups
}

// TestRestoreScriptRoundTrip: what the archive script took, the restore
// script puts back, modes included, and marks the volume restored.
func TestRestoreScriptRoundTrip(t *testing.T) {
	first, second := time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	src := t.TempDir()
	writeTree(t, src, sampleData)
	if err := os.Chmod(filepath.Join(src, "app.db"), 0o600); err != nil {
		t.Fatal(err)
	}
	want := readTree(t, src)
	want[restoredMarker] = "-rw-r--r-- 20261201T020000Z\n"
	backups := t.TempDir()
	for _, at := range []time.Time{first, second} {
		if out, code := runScript(t, archiveScript, archiveEnv(src, backups, at, 7)...); code != 0 {
			t.Fatalf("archive script exited %d:\n%s", code, out)
		}
	}
	for _, backup := range []string{"latest", "20261201T020000Z"} {
		t.Run(backup, func(t *testing.T) {
			data := t.TempDir()
			writeTree(t, data, map[string]string{"lost+found/": ""}) // a fresh ext4 volume
			out, code := runScript(t, restoreScript, restoreEnv(data, backups, backup)...)
			if code != 0 {
				t.Fatalf("restore script exited %d:\n%s", code, out)
			}
			got := readTree(t, data)
			got[restoredMarker] = strings.Replace(got[restoredMarker], "-rw-------", "-rw-r--r--", 1) // umask of the test process
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("restored volume: -archived +restored:\n%s\n%s", diff, out)
			}
			// The pod restarts: its init container runs again and leaves the data alone.
			writeTree(t, data, map[string]string{"app.db": "written by the app since"})
			if out, code := runScript(t, restoreScript, restoreEnv(data, backups, backup)...); code != 0 || !strings.Contains(out, "nothing to do") {
				t.Errorf("restore on a restored volume: exit %d %q, want 0 and nothing to do", code, out)
			}
			if raw, _ := os.ReadFile(filepath.Join(data, "app.db")); string(raw) != "written by the app since" {
				t.Errorf("a second run of the restore changed app.db to %q", raw)
			}
		})
	}
}

func TestRestoreScriptRefuses(t *testing.T) {
	good := func(t *testing.T) string {
		return archived(t, map[string]string{"app.db": "rows"}, time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
	}
	cases := map[string]struct {
		reason  string
		backups func(t *testing.T) string
		data    map[string]string
		backup  string
		wantOut string
	}{
		"NoBackupAtAll": {
			reason:  "latest on an empty backups volume: never start empty instead",
			backups: func(t *testing.T) string { return t.TempDir() },
			backup:  "latest",
			wantOut: "restore: no backup on volume backups-demo-0 (restoreFrom latest); refusing to start on an empty data volume",
		},
		"NamedMissing": {
			reason:  "the named backup is not there (others are)",
			backups: good,
			backup:  "20261130T020000Z",
			wantOut: "restore: backup 20261130T020000Z not found on volume backups-demo-0; refusing to start on an empty data volume",
		},
		"Corrupt": {
			reason: "not a gzip archive at all",
			backups: func(t *testing.T) string {
				dir := t.TempDir()
				writeTree(t, dir, map[string]string{"20261201T020000Z.tar.gz": "garbage, not gzip"})
				return dir
			},
			backup:  "20261201T020000Z",
			wantOut: "restore: backup 20261201T020000Z on volume backups-demo-0 is unreadable; refusing to start on an empty data volume",
		},
		"Truncated": {
			reason: "an archive cut short (a full volume, a killed copy) is read whole before anything is extracted",
			backups: func(t *testing.T) string {
				dir := archived(t, map[string]string{"big.bin": strings.Repeat("0123456789abcdef", 1<<14), "app.db": "rows"}, time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
				file := filepath.Join(dir, "20261201T020000Z.tar.gz")
				raw, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, raw[:len(raw)/2], 0o600); err != nil {
					t.Fatal(err)
				}
				return dir
			},
			backup:  "latest",
			wantOut: "is unreadable; refusing to start on an empty data volume",
		},
		"DataNotEmpty": {
			reason:  "data no restore wrote is never overwritten",
			backups: good,
			data:    map[string]string{"precious.db": "someone's data"},
			backup:  "latest",
			wantOut: "already holds data that no restore wrote; refusing to overwrite it",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			data := t.TempDir()
			writeTree(t, data, tc.data)
			before := readTree(t, data)
			out, code := runScript(t, restoreScript, restoreEnv(data, tc.backups(t), tc.backup)...)
			if code == 0 || !strings.Contains(out, tc.wantOut) {
				t.Errorf("%s\nexit %d, output %q; want a failure saying %q", tc.reason, code, out, tc.wantOut)
			}
			if diff := cmp.Diff(before, readTree(t, data)); diff != "" {
				t.Errorf("%s\na refused restore changed the data volume: -before +after:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestRestoreScriptResumes: a restore that died half way (the marker is
// there) empties what it extracted and starts again.
func TestRestoreScriptResumes(t *testing.T) {
	backups := archived(t, map[string]string{"app.db": "rows"}, time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC))
	data := t.TempDir()
	writeTree(t, data, map[string]string{restoringMarker: "", "half/extracted.log": "partial", "lost+found/": ""})
	out, code := runScript(t, restoreScript, restoreEnv(data, backups, "latest")...)
	if code != 0 {
		t.Fatalf("restore after an interrupted one exited %d:\n%s", code, out)
	}
	got := listDir(t, data)
	if diff := cmp.Diff([]string{restoredMarker, "app.db", "lost+found"}, got); diff != "" {
		t.Errorf("volume after the resumed restore: -want +got:\n%s\n%s", diff, out)
	}
}

func TestRestoring(t *testing.T) {
	withRestore := withSpec(map[string]any{"restoreFrom": "latest"})
	carrying := func(st appsv1.StatefulSetStatus) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{
			ObjectMeta: metav1.ObjectMeta{Generation: 2},
			Spec:       appsv1.StatefulSetSpec{Template: podTemplateAnnotated(map[string]string{restoringAnnotation: "latest"})},
			Status:     st,
		}
	}
	allReady := appsv1.StatefulSetStatus{ObservedGeneration: 2, Replicas: 2, ReadyReplicas: 2, UpdatedReplicas: 2, CurrentRevision: "r1", UpdateRevision: "r1"}
	oneReady := allReady
	oneReady.ReadyReplicas = 1
	stale := allReady
	stale.ObservedGeneration = 1
	cases := map[string]struct {
		reason string
		spec   map[string]any
		sts    *appsv1.StatefulSet
		want   bool
	}{
		"NoRestore":  {reason: "no restoreFrom", spec: baseSpec(), want: false},
		"New":        {reason: "a new MyApp restores before its pods start", spec: withRestore, want: true},
		"OneOfTwo":   {reason: "one pod restored, the other still restoring", spec: withRestore, sts: carrying(oneReady), want: true},
		"Stale":      {reason: "ready pods of an older generation prove nothing", spec: withRestore, sts: carrying(stale), want: true},
		"AllReady":   {reason: "every pod ready on the template with the init container: over", spec: withRestore, sts: carrying(allReady), want: false},
		"NotCarried": {reason: "ready pods of a template without the init container were not restored", spec: withRestore, sts: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 2}, Status: allReady}, want: true},
		"Marked": {
			reason: "marked restored: stays over whatever the pods do",
			spec:   withRestore,
			sts:    &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{restoredAnnotation: "latest"}}},
			want:   false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := restoring(parse(t, tc.spec), tc.sts); got != tc.want {
				t.Errorf("%s\nrestoring = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}

// TestStatefulSetRestore: while restoring the pods get the init container;
// once over, only the StatefulSet's mark remains.
func TestStatefulSetRestore(t *testing.T) {
	a := parse(t, withSpec(map[string]any{"restoreFrom": "20261201T020000Z"}))
	o := observedFor(t, a, nil)
	sts := statefulSet(a, o, freshSelector(a), 2)
	pod := sts.Spec.Template.Spec
	if len(pod.InitContainers) != 1 || pod.InitContainers[0].Name != "restore" || sts.Spec.Template.Annotations[restoringAnnotation] != "20261201T020000Z" {
		t.Fatalf("restoring StatefulSet: init containers %v, annotations %v", pod.InitContainers, sts.Spec.Template.Annotations)
	}
	mounts := map[string]string{}
	for _, m := range pod.InitContainers[0].VolumeMounts {
		mounts[m.Name] = m.MountPath + map[bool]string{true: " ro", false: " rw"}[m.ReadOnly]
	}
	if diff := cmp.Diff(map[string]string{"data": "/data rw", "backups": "/backups ro"}, mounts); diff != "" {
		t.Errorf("restore init container mounts: -want +got:\n%s", diff)
	}
	if n := len(sts.Spec.VolumeClaimTemplates); n != 2 || sts.Spec.VolumeClaimTemplates[1].Name != backupsVolume {
		t.Errorf("volume templates %d, want data and backups", n)
	}

	o.restored = true
	done := statefulSet(a, o, freshSelector(a), 2)
	if len(done.Spec.Template.Spec.InitContainers) != 0 || done.Annotations[restoredAnnotation] != "20261201T020000Z" {
		t.Errorf("restored StatefulSet: init containers %v, annotations %v; want none and the restored mark", done.Spec.Template.Spec.InitContainers, done.Annotations)
	}
	if _, ok := done.Spec.Template.Annotations[restoringAnnotation]; ok {
		t.Error("restored StatefulSet's pod template still carries the restore annotation")
	}
}

func podTemplateAnnotated(annotations map[string]string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
}

// TestRestoreFailures: the Restored condition quotes what a refusing restore
// init container said last, from the related pods.
func TestRestoreFailures(t *testing.T) {
	refused := "restore: backup 20261201T020000Z not found on volume backups-demo-1; refusing to start on an empty data volume"
	pod := func(name string, st corev1.ContainerStatus) corev1.Pod {
		st.Name = "restore"
		return corev1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "apps"},
			Status:     corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{st}},
		}
	}
	crashLooping := corev1.ContainerStatus{
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error", Message: "restore: something first\n" + refused + "\n"}},
	}
	justFailed := corev1.ContainerStatus{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Reason: "Error"}}}
	succeededAfterFailure := corev1.ContainerStatus{
		State:                corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0}},
		LastTerminationState: crashLooping.LastTerminationState,
	}
	running := corev1.ContainerStatus{
		State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
		LastTerminationState: crashLooping.LastTerminationState,
	}
	cases := map[string]struct {
		reason      string
		pods        []corev1.Pod
		related     bool
		wantReason  string
		wantMessage string
	}{
		"NoCustomize": {reason: "without related pods nothing is known", wantReason: kube.ReasonRestoring},
		"Refused": {
			reason: "demo-1 crash-loops in its init container: its last line", related: true,
			pods:       []corev1.Pod{pod("demo-0", succeededAfterFailure), pod("demo-1", crashLooping)},
			wantReason: ReasonRestoreFailed,
			wantMessage: "the restore refused to start the application on an empty or partial data volume: demo-1: " + refused +
				"; see kubectl -n apps logs demo-1 -c restore",
		},
		"NoMessage": {
			reason: "no termination message: the exit code", related: true,
			pods:        []corev1.Pod{pod("demo-0", justFailed)},
			wantReason:  ReasonRestoreFailed,
			wantMessage: "the restore refused to start the application on an empty or partial data volume: demo-0: exited 1 (Error); see kubectl -n apps logs demo-0 -c restore",
		},
		"Retrying": {reason: "running again after a failure: still restoring", related: true, pods: []corev1.Pod{pod("demo-0", running)}, wantReason: kube.ReasonRestoring},
		"OtherPod": {reason: "only the MyApp's own ordinals count", related: true, pods: []corev1.Pod{pod("demo-7", crashLooping)}, wantReason: kube.ReasonRestoring},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := request(t, withSpec(map[string]any{"restoreFrom": "20261201T020000Z"}), nil, nil)
			if tc.related {
				req.Related = composite.ChildMap{"Pod.v1": {}}
				for _, p := range tc.pods {
					raw, err := json.Marshal(p)
					if err != nil {
						t.Fatal(err)
					}
					req.Related["Pod.v1"][p.Name] = raw
				}
			}
			response, err := Sync(req, testNow)
			if err != nil {
				t.Fatal(err)
			}
			var st v1alpha1.MyAppStatus
			if err := json.Unmarshal(response.Status, &st); err != nil {
				t.Fatal(err)
			}
			c := meta.FindStatusCondition(st.Conditions, ConditionRestored)
			if c == nil || c.Status != metav1.ConditionFalse || c.Reason != tc.wantReason {
				t.Fatalf("%s\nRestored condition %+v, want False/%s", tc.reason, c, tc.wantReason)
			}
			if tc.wantMessage != "" {
				if diff := cmp.Diff(tc.wantMessage, c.Message); diff != "" {
					t.Errorf("%s\nmessage: -want +got:\n%s", tc.reason, diff)
				}
			}
		})
	}
}

// TestRestoreOverRollsThePods: the answer that ends the restore drops the
// restore init container, which rolls every pod once more, so it reports
// Progressing True, through the request decoding a cluster's answer takes
// (an observed pod spec keeps its init containers' names and images).
func TestRestoreOverRollsThePods(t *testing.T) {
	spec := withSpec(map[string]any{"restoreFrom": "latest", "replicaCount": 2})
	restoring, err := Sync(request(t, spec, nil, nil), testNow)
	if err != nil {
		t.Fatal(err)
	}
	allReady := appsv1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2, CurrentRevision: "r1", UpdateRevision: "r1"}
	observed := observedFrom(t, restoring, allReady) // every pod restored on the template with the init container
	if n := len(observed.Spec.Template.Spec.InitContainers); n != 1 {
		t.Fatalf("the restoring answer has %d init containers, want the restore's", n)
	}
	over, err := Sync(request(t, spec, nil, observed), testNow)
	if err != nil {
		t.Fatal(err)
	}
	desired := observedFrom(t, over, allReady)
	if n := len(desired.Spec.Template.Spec.InitContainers); n != 0 {
		t.Fatalf("the answer that ends the restore keeps %d init containers, want none", n)
	}
	var st v1alpha1.MyAppStatus
	if err := json.Unmarshal(over.Status, &st); err != nil {
		t.Fatal(err)
	}
	want := metav1.Condition{Type: kube.ConditionProgressing, Status: metav1.ConditionTrue, Reason: kube.ReasonRollingOut,
		Message: "pod template changes: 0 init containers instead of 1"}
	got := meta.FindStatusCondition(st.Conditions, kube.ConditionProgressing)
	if got == nil {
		t.Fatal("no Progressing condition")
	}
	if diff := cmp.Diff(want, *got, cmpopts.IgnoreFields(metav1.Condition{}, "ObservedGeneration", "LastTransitionTime")); diff != "" {
		t.Errorf("Progressing in the answer that ends the restore: -want +got:\n%s", diff)
	}
}

// TestRestoreNeedsBackupsVolume: a StatefulSet that exists without the
// backups volume template cannot carry the restore; the hook refuses (422)
// rather than answer a StatefulSet the API server refuses, or one that starts
// on an empty volume.
func TestRestoreNeedsBackupsVolume(t *testing.T) {
	before := parse(t, baseSpec())
	existing := build(before, 2) // data template only
	_, err := Sync(request(t, withSpec(map[string]any{"restoreFrom": "latest"}), nil, existing), testNow)
	var invalid *composite.InvalidError
	if !errors.As(err, &invalid) || invalid.Field != "spec.restoreFrom" || !strings.Contains(err.Error(), "without the backups volume template") {
		t.Fatalf("Sync(restoreFrom, StatefulSet without backups template) = %v, want an *InvalidError on spec.restoreFrom", err)
	}
	// Once the StatefulSet is marked restored, nothing mounts the volume: fine.
	existing.Annotations = map[string]string{restoredAnnotation: "latest"}
	if _, err := Sync(request(t, withSpec(map[string]any{"restoreFrom": "latest"}), nil, existing), testNow); err != nil {
		t.Errorf("Sync(restored, StatefulSet without backups template) = %v, want an answer", err)
	}
}
