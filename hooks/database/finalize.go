package database

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
)

// How long to wait before asking again while finalization waits.
const (
	finalizeWaitSeconds      = 5
	finalBackupWaitSeconds   = 15
	claimsWaitSeconds        = 30 // PVC changes also trigger a call: they are related objects
	unknownClaimsWaitSeconds = 300
	failedBackupWaitSeconds  = 300
)

// finalize lets the Database go only once its data is where the deletion
// policy, as it is now, wants it:
//
//   - under Snapshot, Job <name>-final-backup has succeeded. It is created
//     once the server is ready (pg_dump needs it), and the server runs, even
//     when hibernating, until the Job is over. A failed Job keeps the
//     Database, and the status says why and how to go on;
//   - the observed StatefulSet carries the PVC retention policy of
//     spec.deletionPolicy and its controller has seen it;
//   - the PVCs themselves follow the policy (volumesFollowPolicy): under
//     Retain and Snapshot no related PVC is owned by the StatefulSet, under
//     Delete every existing one is.
//
// Until then every child is kept and backups are suspended. Once done the
// answer has finalized set and no children: Metacontroller removes its
// finalizer and garbage collection deletes the children through their owner
// references, the StatefulSet taking the PVCs it owns with it (Metacontroller
// v4.17 stops managing children once its finalizer is gone; older versions
// delete the unlisted children directly, with the same outcome).
func finalize(d *database, o *observed, t *topology, s settings, now time.Time) (*composite.Response, error) {
	p := plan{replicas: 1, restoring: restoring(d, o.statefulSet), finalizing: true}
	if d.hibernate {
		p.replicas = 0
	}
	var job runtime.Object
	resync := float64(finalizeWaitSeconds)
	if d.deletionPolicy == dbv1.DeletionSnapshot {
		job, resync = finalBackup(d, o, &p)
	}
	if p.waitingFor == "" {
		v := volumesFollowPolicy(d, o)
		p.waitingFor = v.waitingFor
		if v.needsServer {
			p.replicas = 1 // the StatefulSet controller fixes PVC owners only through a ready pod
		}
		if v.resync > 0 {
			resync = v.resync
		}
	}
	done := p.waitingFor == ""

	if r := t.resync(); r > 0 && r < resync {
		resync = r // a failover delay runs out sooner
	}
	sts := desiredStatefulSet(d, o, s, p, t)
	response, err := composite.NewFinalizeResponse(done, resync, status(d, o, p, t, &sts.Spec.Template, now), append(desiredChildren(d, o, s, p, t, sts, true), job)...)
	if err != nil {
		return nil, fmt.Errorf("cannot finalize Database %s/%s: %w", d.namespace, d.name, err)
	}
	return response, nil
}

// finalBackup decides the final backup Job of a Snapshot deletion: the Job to
// keep or create (nil while it must not exist yet) and how soon to look again,
// and records in p what is waited for. The Job is created only once the
// server is ready, so pg_dump does not race the server's start; the script
// waits for it too (backupScript).
func finalBackup(d *database, o *observed, p *plan) (runtime.Object, float64) {
	p.final = observeJob(o.finalBackupJob)
	switch p.final.state {
	case jobFailed:
		p.waitingFor = "the final backup failed: " + p.final.reason
		return finalBackupJob(d), failedBackupWaitSeconds
	case jobRunning:
		p.replicas = 1 // pg_dump needs the server
		if o.finalBackupJob == nil && !serverReady(o.statefulSet) {
			p.waitingFor = "waiting for the server before the final backup"
			return nil, finalBackupWaitSeconds
		}
		p.waitingFor = "waiting for final backup Job " + d.finalBackupJobName()
		return finalBackupJob(d), finalBackupWaitSeconds
	default:
		return finalBackupJob(d), finalizeWaitSeconds
	}
}

// volumeWait is what volumesFollowPolicy found still missing.
type volumeWait struct {
	waitingFor  string  // "" when the StatefulSet may go
	needsServer bool    // PVC owners are not as the policy wants: the pod must run so the StatefulSet controller fixes them
	resync      float64 // how soon to look again; 0 for the default
}

// volumesFollowPolicy says what is still needed before the StatefulSet may be
// deleted with the volumes treated as spec.deletionPolicy says.
//
// The StatefulSet's retention policy alone proves nothing: its controller
// changes a PVC's owner references only through a pod that exists (and, for
// the PVCs of a live replica, only once that pod is running and ready), yet
// it records status.observedGeneration on every pass. A Database that ran
// under Delete, was hibernated, and is then deleted under Retain would have a
// StatefulSet saying whenDeleted Retain while its PVCs are still owned by it,
// and garbage collection would delete them with it. So the related PVCs
// (Customize) are checked themselves:
//
//   - Retain and Snapshot: no PVC may be owned by the observed StatefulSet;
//   - Delete: every existing PVC must be owned by it (else it would be left
//     behind, which loses nothing but is not what was asked).
//
// Without related PVCs in the request (database-controller has no customize
// hook) nothing is known about them: Retain and Snapshot then never finish on
// their own, as the only safe answer; Delete finishes on the StatefulSet's
// policy as before, at worst leaving PVCs behind. With no observed
// StatefulSet there is nothing garbage collection could take the PVCs with.
func volumesFollowPolicy(d *database, o *observed) volumeWait {
	sts := o.statefulSet
	if sts == nil {
		return volumeWait{}
	}
	want := retentionPolicy(d.deletionPolicy).WhenDeleted
	got := appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	if policy := sts.Spec.PersistentVolumeClaimRetentionPolicy; policy != nil && policy.WhenDeleted != "" {
		got = policy.WhenDeleted
	}
	retain := want == appsv1.RetainPersistentVolumeClaimRetentionPolicyType
	pending := claimsNotFollowing(o.claims, sts, retain)
	w := volumeWait{needsServer: len(pending) > 0}
	switch {
	case got != want:
		w.waitingFor = fmt.Sprintf("setting the StatefulSet's PVC retention whenDeleted from %s to %s", got, want)
	case sts.Status.ObservedGeneration < sts.Generation:
		w.waitingFor = "waiting for the StatefulSet controller to apply PVC retention whenDeleted " + string(want)
	case !o.claims.known && retain:
		w.waitingFor = unknownClaimsMessage(d)
		w.resync = unknownClaimsWaitSeconds
	case len(pending) > 0:
		w.waitingFor = pendingClaimsMessage(d, sts, pending, retain)
		w.resync = claimsWaitSeconds
	}
	return w
}

// claimsNotFollowing names the related PVCs whose owner references are not
// yet as the policy wants: owned by sts under Retain (retain), not owned under
// Delete. PVCs already being deleted are left out: nothing can keep them.
func claimsNotFollowing(c claims, sts *appsv1.StatefulSet, retain bool) []string {
	var names []string
	for _, pvc := range c.byName {
		if pvc.DeletionTimestamp == nil && ownedBy(pvc, sts) == retain {
			names = append(names, pvc.Name)
		}
	}
	return names
}

// ownedBy reports an owner reference from pvc to the StatefulSet sts itself
// (same name and UID): the one garbage collection follows when sts goes.
func ownedBy(pvc *corev1.PersistentVolumeClaim, sts *appsv1.StatefulSet) bool {
	for _, ref := range pvc.OwnerReferences {
		if ref.Kind == "StatefulSet" && ref.Name == sts.Name && ref.UID == sts.UID {
			return true
		}
	}
	return false
}

// pendingClaimsMessage says which PVCs do not follow the policy yet, what the
// hook waits for, and how to finish by hand.
func pendingClaimsMessage(d *database, sts *appsv1.StatefulSet, pending []string, retain bool) string {
	subject, them := "PVC "+pending[0]+" is", "it"
	if len(pending) > 1 {
		subject, them = "PVCs "+strings.Join(pending, " and ")+" are", "them"
	}
	pods := "pod " + d.podName()
	if d.ha.enabled() {
		pods = "their pods"
	}
	waitFor := fmt.Sprintf("waiting for %s to run and be ready, as the StatefulSet controller only changes the owners of a ready pod's PVCs", pods)
	if retain {
		if serverReady(sts) {
			waitFor = "waiting for the StatefulSet controller to release " + them + " (whenDeleted Retain)"
		}
		return fmt.Sprintf("%s still owned by StatefulSet %s, whose deletion would delete %s: %s; or release %s by hand: %s",
			subject, d.name, them, waitFor, them, releaseCommands(d, pending))
	}
	if serverReady(sts) {
		waitFor = "waiting for the StatefulSet controller to take ownership (whenDeleted Delete)"
	}
	return fmt.Sprintf("%s not owned by StatefulSet %s yet, whose deletion would leave %s behind: %s; or set spec.deletionPolicy to Retain and delete the PVCs by hand once the Database is gone",
		subject, d.name, them, waitFor)
}

// unknownClaimsMessage: Retain or Snapshot without related PVCs in the request.
func unknownClaimsMessage(d *database) string {
	names := d.claimNamesOf(int(d.ha.instances))
	return fmt.Sprintf("cannot check that PVCs %s have no owner reference to StatefulSet %s, which would delete them with it: "+
		"database-controller has no customize hook (apply the current compositecontroller.yaml); "+
		"or check them by hand, remove any owner reference (%s), then remove Metacontroller's finalizer from the Database",
		strings.Join(names, " and "), d.name, releaseCommands(d, names))
}

// releaseCommands are the kubectl commands that remove all owner references
// from the PVCs names.
func releaseCommands(d *database, names []string) string {
	fixes := make([]string, len(names))
	for i, name := range names {
		fixes[i] = fmt.Sprintf(`kubectl -n %s patch pvc %s --type=json -p '[{"op":"remove","path":"/metadata/ownerReferences"}]'`, d.namespace, name)
	}
	return strings.Join(fixes, "; ")
}
