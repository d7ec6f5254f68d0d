package kube

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestContainerFailure(t *testing.T) {
	at := metav1.NewTime(time.Date(2026, 12, 1, 2, 0, 5, 0, time.UTC))
	terminated := func(code int32, reason, message string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "backup", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, Message: message, FinishedAt: at}}}
	}
	long := strings.Repeat("é", 200) // 400 bytes: the cut must not split a rune
	cases := []struct {
		reason string
		status corev1.ContainerStatus
		marker string
		want   Failure
		failed bool
	}{
		{reason: "the last FAILED: line, after the marker, the lines after it ignored",
			status: terminated(1, "Error", "backup: waiting\nbackup: FAILED: first\npg_dump: detail\nbackup: FAILED: pg_dump failed: no space left on device\ntrailing noise\n"),
			marker: "FAILED:", want: Failure{Said: "pg_dump failed: no space left on device", FinishedAt: at}, failed: true},
		{reason: "no marker: the last line",
			status: terminated(2, "Error", "restore: one\nrestore: refusing\n"),
			want:   Failure{Said: "restore: refusing", FinishedAt: at}, failed: true},
		{reason: "no line with the marker: the exit code and reason, nothing else of the log",
			status: terminated(137, "OOMKilled", "pg_dump: dumping table secret_stuff\n"),
			marker: "FAILED:", want: Failure{Said: "exited 137 (OOMKilled)", FinishedAt: at}, failed: true},
		{reason: "an empty message: the exit code and reason",
			status: terminated(1, "Error", ""), want: Failure{Said: "exited 1 (Error)", FinishedAt: at}, failed: true},
		{reason: "bounded at a rune boundary",
			status: terminated(1, "Error", "x: FAILED: "+long), marker: "FAILED:",
			want: Failure{Said: strings.Repeat("é", MaxSaid/2) + "...", FinishedAt: at}, failed: true},
		{reason: "invalid UTF-8 is replaced, never put into a status",
			status: terminated(1, "Error", "x: FAILED: bad \xff byte"), marker: "FAILED:",
			want: Failure{Said: "bad ? byte", FinishedAt: at}, failed: true},
		{reason: "waiting to restart: the last termination counts",
			status: corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "init: FAILED: no\n", FinishedAt: at}}},
			marker: "FAILED:", want: Failure{Said: "no", FinishedAt: at}, failed: true},
		{reason: "exit 0 is no failure", status: terminated(0, "Completed", "backup: FAILED: not really\n"), marker: "FAILED:"},
		{reason: "running again: an earlier failure is over",
			status: corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "x: FAILED: old\n"}}},
			marker: "FAILED:"},
		{reason: "never started", status: corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}}},
	}
	for _, tc := range cases {
		got, failed := ContainerFailure(tc.status, tc.marker)
		if failed != tc.failed {
			t.Errorf("%s: failed %v, want %v", tc.reason, failed, tc.failed)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
		}
	}
}
