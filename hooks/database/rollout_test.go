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

func TestObserveRollout(t *testing.T) {
	d := mustParse(t, newDatabase(withRestore("orders", "20261129T023000Z.dump")))
	unrestored := newDatabase(withRestore("orders", "20261129T023000Z.dump"))
	unrestored.Spec.RestoreFrom = nil
	// running is the same Database's StatefulSet settled on a template
	// without a restore, with the given template annotations.
	running := func(annotations ...string) *appsv1.StatefulSet {
		sts := runningStatefulSet(t, unrestored, 1)
		for i := 0; i+1 < len(annotations); i += 2 {
			sts.Spec.Template.Annotations[annotations[i]] = annotations[i+1]
		}
		return sts
	}
	const backup, updating = "orders/20261129T023000Z.dump", "updating the server to size small and image postgres:17: pod template changes: "
	cases := map[string]struct {
		reason   string
		observed *appsv1.StatefulSet
		desired  *appsv1.StatefulSet // its template is the answer's
		want     string
	}{
		"Settled":      {reason: "the answer gives the template that runs: settled", observed: running(), desired: running(), want: ""},
		"Carried":      {reason: "the running template carries the restore still wanted", observed: running(restoringAnnotation, backup), desired: running(restoringAnnotation, backup), want: ""},
		"RestoreOver":  {reason: "the answer that ends the restore drops the machinery: the pod rolls", observed: running(restoringAnnotation, backup), desired: running(), want: updating + "annotation " + restoringAnnotation + " removed"},
		"RestoreStart": {reason: "a restore added to a running server rolls it", observed: running(), desired: running(restoringAnnotation, backup), want: updating + "annotation " + restoringAnnotation},
		"OtherHash":    {reason: "another reporter image or new scripts: same size and image, another template hash", observed: running(templateHashKey, "5f2a"), desired: running(templateHashKey, "9c1e"), want: updating + "annotation " + templateHashKey},
		"Unhashed":     {reason: "a template written before it carried a hash", observed: running(), desired: running(templateHashKey, "9c1e"), want: updating + "annotation " + templateHashKey},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := observeRollout(d, tc.observed, 1, &tc.desired.Spec.Template)
			if diff := cmp.Diff(tc.want, r.progress); diff != "" {
				t.Errorf("%s\nprogress: -want +got:\n%s", tc.reason, diff)
			}
			if r.settled != (tc.want == "") {
				t.Errorf("%s\nsettled = %v with progress %q", tc.reason, r.settled, r.progress)
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
