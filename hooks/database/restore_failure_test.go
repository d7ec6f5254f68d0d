package database

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dbv1 "metahooks/api/v1"
)

// restorePod is pod <n>-0 of db, its init container waiting to restart
// after it exited with code and message (0: it is running).
func restorePod(db *dbv1.Database, code int32, message string) *corev1.Pod {
	st := corev1.ContainerStatus{Name: initContainerName, Image: "postgres:17"}
	if code == 0 {
		st.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(testNow.Add(-time.Minute))}
	} else {
		st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
		st.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error", Message: message,
			FinishedAt: metav1.NewTime(testNow.Add(-time.Minute))}
	}
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: db.Name + "-0", Namespace: db.Namespace},
		Status:     corev1.PodStatus{Phase: corev1.PodPending, InitContainerStatuses: []corev1.ContainerStatus{st}},
	}
}

// TestObserveRestoreFailure: what pod <n>-0's init container said when it
// last failed, only while the Database restores; nothing for a running
// init container, another container, or a Database that does not restore.
func TestObserveRestoreFailure(t *testing.T) {
	restoring := newDatabase(withRestore(testName, "latest"))
	const said = "backup latest not found on the backups volume of Database orders; no empty database is started in its place"
	cases := []struct {
		name, reason string
		db           *dbv1.Database
		pod          *corev1.Pod
		want         string // "" for none
	}{
		{"Failed", "the init container exited 1 with the FAILED line", restoring, restorePod(restoring, 1, "init: FAILED: "+said), said},
		{"Running", "a running restore has not failed", restoring, restorePod(restoring, 0, ""), ""},
		{"NoPod", "pod 0 not observed yet", restoring, nil, ""},
		{"NoRestore", "a Database without restoreFrom reads no pod", newDatabase(), restorePod(restoring, 1, "init: FAILED: "+said), ""},
		{"NoMarker", "a crash without a FAILED line: its exit code and reason", restoring, restorePod(restoring, 137, ""), "exited 137 (Error)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var objects []runtime.Object
			if tc.pod != nil {
				objects = append(objects, tc.pod)
			}
			req := newRequest(t, tc.db, false, objects...)
			d := mustParse(t, tc.db)
			f, err := observeRestoreFailure(req, d)
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if f != nil {
				got = f.Said
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
