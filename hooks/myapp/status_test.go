package myapp

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/kube"
)

func TestStatus(t *testing.T) {
	three := int32(3)
	withStatus := func(st appsv1.StatefulSetStatus) *appsv1.StatefulSet {
		st.ObservedGeneration = 1
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Generation: 1}, Spec: appsv1.StatefulSetSpec{Replicas: &three, Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{kube.ConfigHashAnnotation: "old"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/demo:1.0"}}},
		}}, Status: st}
	}
	ready := appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3, UpdatedReplicas: 3, CurrentRevision: "r", UpdateRevision: "r"}
	half := appsv1.StatefulSetStatus{Replicas: 3, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 3, CurrentRevision: "r", UpdateRevision: "r"}
	cases := map[string]struct {
		reason          string
		sts             *appsv1.StatefulSet
		desired         int32
		finalizing      bool
		template        func(*corev1.PodTemplateSpec) // the desired template, from the observed one
		wantReady       metav1.ConditionStatus
		wantReadyReason string
		wantProgressing metav1.ConditionStatus
		wantAvailable   int32
	}{
		"Missing":     {reason: "no StatefulSet yet", desired: 3, wantReady: "False", wantReadyReason: kube.ReasonStatefulSetMissing, wantProgressing: "True"},
		"AllReady":    {reason: "all replicas available", sts: withStatus(ready), desired: 3, wantReady: "True", wantReadyReason: ReasonAllReplicasAvailable, wantProgressing: "False", wantAvailable: 3},
		"PartlyReady": {reason: "1 of 3 available", sts: withStatus(half), desired: 3, wantReady: "False", wantReadyReason: ReasonReplicasUnavailable, wantProgressing: "False", wantAvailable: 1},
		"Scaling":     {reason: "the spec asks for 5", sts: withStatus(ready), desired: 5, wantReady: "False", wantReadyReason: ReasonReplicasUnavailable, wantProgressing: "True", wantAvailable: 3},
		"Finalizing":  {reason: "being torn down", sts: withStatus(ready), desired: 0, finalizing: true, wantReady: "False", wantReadyReason: kube.ReasonTerminating, wantProgressing: "True", wantAvailable: 3},
		"NewImage": {reason: "the answer changes the image: the roll starts now, while every pod still serves", sts: withStatus(ready), desired: 3,
			template:  func(p *corev1.PodTemplateSpec) { p.Spec.Containers[0].Image = "registry.example/demo:2.0" },
			wantReady: "True", wantReadyReason: ReasonAllReplicasAvailable, wantProgressing: "True", wantAvailable: 3},
		"NewConfig": {reason: "a new config hash rolls the pods", sts: withStatus(ready), desired: 3,
			template:  func(p *corev1.PodTemplateSpec) { p.Annotations[kube.ConfigHashAnnotation] = "new" },
			wantReady: "True", wantReadyReason: ReasonAllReplicasAvailable, wantProgressing: "True", wantAvailable: 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var template *corev1.PodTemplateSpec
			if tc.sts != nil && !tc.finalizing {
				template = tc.sts.Spec.Template.DeepCopy()
				if tc.template != nil {
					tc.template(template)
				}
			}
			got := status(parse(t, baseSpec()), &observed{statefulSet: tc.sts}, tc.desired, template, tc.finalizing, testNow)
			if len(got.Conditions) != 3 {
				t.Fatalf("%s\nconditions %v, want Ready, Progressing and BackupSucceeded", tc.reason, got.Conditions)
			}
			readyCondition, progressing := got.Conditions[0], got.Conditions[1]
			if readyCondition.Status != tc.wantReady || readyCondition.Reason != tc.wantReadyReason || progressing.Status != tc.wantProgressing {
				t.Errorf("%s\nReady %s/%s Progressing %s, want %s/%s %s", tc.reason, readyCondition.Status, readyCondition.Reason, progressing.Status, tc.wantReady, tc.wantReadyReason, tc.wantProgressing)
			}
			if got.AvailableReplicas != tc.wantAvailable || got.ObservedGeneration != 3 {
				t.Errorf("%s\navailableReplicas %d observedGeneration %d, want %d and 3", tc.reason, got.AvailableReplicas, got.ObservedGeneration, tc.wantAvailable)
			}
			if readyCondition.ObservedGeneration != 3 {
				t.Errorf("%s\ncondition observedGeneration %d, want the parent's 3", tc.reason, readyCondition.ObservedGeneration)
			}
		})
	}
}
