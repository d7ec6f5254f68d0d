package podrun

import (
	"fmt"
	"sort"
	"syscall"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// What several pods of one StatefulSet need: each ordinal's pod, the
// addresses a cluster's DNS would give (Host.Env), and a node dying under a
// pod.

// StatefulSetPodOrdinal is pod <sts>-<ordinal> of sts: its template, with a
// PVC volume per volumeClaimTemplate (claim <template>-<sts>-<ordinal>), as
// the StatefulSet controller makes it.
func (h *Host) StatefulSetPodOrdinal(sts *appsv1.StatefulSet, ordinal int) *Pod {
	spec := *sts.Spec.Template.Spec.DeepCopy()
	for _, vct := range sts.Spec.VolumeClaimTemplates {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: vct.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: fmt.Sprintf("%s-%s-%d", vct.Name, sts.Name, ordinal)},
		}})
	}
	return h.Pod(fmt.Sprintf("%s-%d", sts.Name, ordinal), spec)
}

// Kill is the node dying under the pod: SIGKILL to the process's whole
// process group (the container's command and everything it started), then
// the wait for its end.
func (pr *Process) Kill() {
	_ = syscall.Kill(-pr.Cmd.Process.Pid, syscall.SIGKILL)
	<-pr.done
}

// Freeze stops every process of the container (SIGSTOP to its process
// group): alive, holding its sockets and files, answering nobody, as a
// machine cut off or a process stalled. Thaw lets it go on (SIGCONT).
func (pr *Process) Freeze() { _ = syscall.Kill(-pr.Cmd.Process.Pid, syscall.SIGSTOP) }

// Thaw is Freeze undone.
func (pr *Process) Thaw() { _ = syscall.Kill(-pr.Cmd.Process.Pid, syscall.SIGCONT) }

// envList is Host.Env as KEY=VALUE, sorted.
func (h *Host) envList() []string {
	var env []string
	for k, v := range h.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}
