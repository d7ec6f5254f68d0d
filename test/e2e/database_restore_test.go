package e2e

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestDatabaseRestore: a Database created with restoreFrom
// (examples/database-restore.yaml) gets the restore machinery in its pod
// template, which the API server accepts. Once the pod is ready on that
// template, the answer drops the machinery, marks the StatefulSet restored
// and already says Progressing True (the pod restarts once more); after the
// new template rolls out, an idle sync is a fixed point with Progressing
// False.
func TestDatabaseRestore(t *testing.T) {
	ns := createNamespace(t, "database-restore")
	parent := createParent(t, databaseController, ns, readExample(t, "database-restore.yaml"))
	name := parent.GetName()
	const source = "orders/latest"

	answer := settle(t, databaseController, ns, name, "restoring")
	if got := conditionStatus(answer.Status, "Progressing"); got != "True" {
		t.Errorf("Progressing = %q while restoring, want True; status %v", got, answer.Status)
	}
	sts := &appsv1.StatefulSet{}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
		t.Fatal(err)
	}
	if got := sts.Spec.Template.Annotations["example.com/restore"]; got != source {
		t.Fatalf("stored StatefulSet's template carries restore %q, want %s", got, source)
	}

	// The pod is ready on the restoring template: the restore is over.
	rollOut(t, ns, name)
	answer, w := databaseController.sync(t, ns, name, false)
	if len(w.updated) != 1 || !anyHasPrefix(w.updated, "StatefulSet.apps/v1 "+name) || len(w.created)+len(w.deleted) != 0 {
		t.Fatalf("sync after the restore: %s; want only the StatefulSet updated", w)
	}
	if got, message := conditionStatus(answer.Status, "Progressing"), conditionMessage(answer.Status, "Progressing"); got != "True" || !strings.Contains(message, "annotation example.com/restore removed") {
		t.Errorf("Progressing %q (%q) in the answer that drops the restore machinery, want True naming the restore annotation removed", got, message)
	}
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: ns, Name: name}, sts); err != nil {
		t.Fatal(err)
	}
	if sts.Annotations["example.com/restored-from"] != source || sts.Spec.Template.Annotations["example.com/restore"] != "" {
		t.Errorf("StatefulSet after the restore: annotations %v, template annotations %v; want restored-from %s and no restore", sts.Annotations, sts.Spec.Template.Annotations, source)
	}

	// The new template rolls out: a fixed point, nothing in progress.
	rollOut(t, ns, name)
	answer = settle(t, databaseController, ns, name, "restored")
	if got := conditionStatus(answer.Status, "Progressing"); got != "False" {
		t.Errorf("Progressing = %q once the restored template runs, want False; status %v", got, answer.Status)
	}
}
