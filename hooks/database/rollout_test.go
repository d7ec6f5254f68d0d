package database

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
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
			r := observeRollout(d, tc.observed, 1, tc.restoring, "")
			if diff := cmp.Diff(tc.want, r.progress); diff != "" {
				t.Errorf("%s\nprogress: -want +got:\n%s", tc.reason, diff)
			}
			if r.settled != (tc.want == "") {
				t.Errorf("%s\nsettled = %v with progress %q", tc.reason, r.settled, r.progress)
			}
		})
	}
}

func TestObserveRolloutTemplateHash(t *testing.T) {
	d := mustParse(t, newDatabase())
	hashed := func(hash string) *appsv1.StatefulSet {
		sts := runningStatefulSet(t, newDatabase(), 1)
		if hash != "" {
			sts.Spec.Template.Annotations[templateHashKey] = hash
		}
		return sts
	}
	cases := map[string]struct {
		reason   string
		observed *appsv1.StatefulSet
		hash     string
		want     string
	}{
		"SingleServer": {reason: "a single server's template has no hash to compare", observed: hashed(""), want: ""},
		"Same":         {reason: "the instances run the template this answer gives", observed: hashed("5f2a"), hash: "5f2a", want: ""},
		"Changed":      {reason: "another reporter image or new scripts: same size and image, another template", observed: hashed("5f2a"), hash: "9c1e", want: "the instances' pod template changes: they restart on it one by one, the primary last"},
		"Unhashed":     {reason: "a template written before it carried a hash", observed: hashed(""), hash: "9c1e", want: "the instances' pod template changes: they restart on it one by one, the primary last"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := observeRollout(d, tc.observed, 1, false, tc.hash)
			if diff := cmp.Diff(tc.want, r.progress); diff != "" {
				t.Errorf("%s\nprogress: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

// TestAgentImageChangeIsProgress: a settled Database at instances 3 answered
// by a service with another reporter image gets a new pod template, and that
// very answer says Progressing True.
func TestAgentImageChangeIsProgress(t *testing.T) {
	body, err := os.ReadFile("testdata/ha-streaming/request.json")
	if err != nil {
		t.Fatal(err)
	}
	for image, want := range map[string]metav1.ConditionStatus{testAgentImage: "False", "registry.example/metahooks:next": "True"} {
		hook, err := Hook(testKey, image)
		if err != nil {
			t.Fatal(err)
		}
		req, err := composite.DecodeRequest(body)
		if err != nil {
			t.Fatal(err)
		}
		response, err := hook(req, testNow)
		if err != nil {
			t.Fatal(err)
		}
		var status struct {
			Conditions []metav1.Condition `json:"conditions"`
		}
		if err := json.Unmarshal(mustJSON(t, response.Status), &status); err != nil {
			t.Fatal(err)
		}
		c := meta.FindStatusCondition(status.Conditions, kube.ConditionProgressing)
		if c == nil || c.Status != want {
			t.Errorf("reporter image %s: Progressing %+v, want status %s", image, c, want)
		}
	}
}
