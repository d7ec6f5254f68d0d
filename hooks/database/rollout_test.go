package database

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
)

func TestObserveRolloutRestore(t *testing.T) {
	parent := newDatabase(withRestore("orders", "20261129T023000Z.dump"))
	d := mustParse(t, parent)
	unrestored := newDatabase(withRestore("orders", "20261129T023000Z.dump"))
	unrestored.Spec.RestoreFrom = nil
	carrying := func(source string) *appsv1.StatefulSet {
		sts := runningStatefulSet(t, unrestored, 1) // settled on the same Database's template without a restore
		if source != "" {
			sts.Spec.Template.Annotations[restoringAnnotation] = source
		}
		return sts
	}
	cases := map[string]struct {
		reason    string
		observed  *appsv1.StatefulSet
		restoring bool
		want      string
	}{
		"NoRestore":   {reason: "no restore wanted, none carried: settled", observed: carrying(""), want: ""},
		"Carried":     {reason: "the running template carries the restore still wanted", observed: carrying("orders/20261129T023000Z.dump"), restoring: true, want: ""},
		"Over":        {reason: "the answer that ends the restore drops the machinery: the pod rolls", observed: carrying("orders/20261129T023000Z.dump"), want: "the restore of backup orders/20261129T023000Z.dump is over: the server restarts without the restore step"},
		"Starts":      {reason: "a restore added to a running server rolls it", observed: carrying(""), restoring: true, want: "the server restarts to restore backup orders/20261129T023000Z.dump"},
		"OtherBackup": {reason: "another backup than the one carried", observed: carrying("orders/20261128T023000Z.dump"), restoring: true, want: "the server restarts to restore backup orders/20261129T023000Z.dump instead of orders/20261128T023000Z.dump"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := observeRollout(d, tc.observed, 1, tc.restoring)
			if diff := cmp.Diff(tc.want, r.progress); diff != "" {
				t.Errorf("%s\nprogress: -want +got:\n%s", tc.reason, diff)
			}
			if r.settled != (tc.want == "") {
				t.Errorf("%s\nsettled = %v with progress %q", tc.reason, r.settled, r.progress)
			}
		})
	}
}
