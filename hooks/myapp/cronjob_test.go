package myapp

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"metahooks/hooks/kube"
)

func TestBackupCronJob(t *testing.T) {
	if job := backupCronJob(parse(t, baseSpec()), false); job != nil {
		t.Errorf("backupCronJob without a schedule = %v, want nil", job)
	}
	a := parse(t, withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"command": []string{"/bin/backup", "--all"}}}))
	job := backupCronJob(a, false)
	if job.Name != "demo-backup" || job.Spec.Schedule != "0 2 * * *" || *job.Spec.Suspend {
		t.Errorf("CronJob %s schedule %q suspend %v", job.Name, job.Spec.Schedule, *job.Spec.Suspend)
	}
	pod := job.Spec.JobTemplate.Spec.Template.Spec
	if diff := cmp.Diff([]string{"/bin/backup", "--all"}, pod.Containers[0].Command); diff != "" {
		t.Errorf("backup command: -want +got:\n%s", diff)
	}
	if claim := pod.Volumes[0].PersistentVolumeClaim; claim == nil || claim.ClaimName != "data-demo-0" || !claim.ReadOnly {
		t.Errorf("backup volume %+v, want data-demo-0 read-only", pod.Volumes[0])
	}
	if pod.Affinity == nil || pod.Affinity.PodAffinity == nil {
		t.Error("backup pod is not pinned to the node of demo-0 (its ReadWriteOnce volume)")
	}
	labels := job.Spec.JobTemplate.Spec.Template.Labels
	if labels["app.kubernetes.io/component"] != kube.ComponentBackup {
		t.Errorf("backup pod labels %v: they must not match the server selector", labels)
	}
	if suspended := backupCronJob(a, true); !*suspended.Spec.Suspend {
		t.Error("backupCronJob(finalizing) is not suspended")
	}
}

func TestSmallChildren(t *testing.T) {
	a := parse(t, withSpec(map[string]any{"port": 9090, "config": map[string]any{"A": "1"}}))
	if service := headlessService(a, freshSelector(a)); service.Spec.ClusterIP != "None" || service.Spec.Ports[0].Port != 9090 {
		t.Errorf("headless Service clusterIP %q port %d, want None and 9090", service.Spec.ClusterIP, service.Spec.Ports[0].Port)
	}
	if cm := configMap(a); cm.Name != "demo-config" || cm.Data["A"] != "1" {
		t.Errorf("ConfigMap %s data %v", cm.Name, cm.Data)
	}
	if pdb := podDisruptionBudget(a, freshSelector(a)); pdb != nil {
		t.Errorf("PodDisruptionBudget without highAvailability = %v, want nil", pdb)
	}
	ha := parse(t, withSpec(map[string]any{"highAvailability": true}))
	if pdb := podDisruptionBudget(ha, freshSelector(ha)); pdb == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget with highAvailability = %v, want maxUnavailable 1", pdb)
	}
	if configHash(a) == configHash(parse(t, withSpec(map[string]any{"port": 9090, "config": map[string]any{"A": "2"}}))) {
		t.Error("configHash is the same for different config")
	}
}
