package composite

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"metahooks/api/v1alpha1"
)

// pruned decodes text into a new T with the typed decoder, cut by T's
// prune tree, and want (if it decodes) with the slow decoder: what the tree
// leaves out is what text has and want has not. It returns their
// difference and whether the typed decoder took text.
func pruned[T any](t *testing.T, text, want string, observed bool) (string, bool) {
	t.Helper()
	var got, wanted T
	if !decodePruned([]byte(text), &got, observed) {
		return "", false
	}
	if err := decodeSlow([]byte(want), &wanted); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	return cmp.Diff(wanted, got, probeOptions), true
}

// prunedAs is pruned for T, observed or not.
func prunedAs[T any](observed bool) func(t *testing.T, text, want string) (string, bool) {
	return func(t *testing.T, text, want string) (string, bool) { return pruned[T](t, text, want, observed) }
}

func TestPrune(t *testing.T) {
	cases := []struct {
		name, reason string
		prune        func(t *testing.T, text, want string) (string, bool)
		text, want   string
		ok           bool
	}{{
		name:   "ManagedFieldsLeftOut",
		reason: "no hook reads managedFields; a name may repeat inside, as in json.RawMessage",
		prune:  prunedAs[v1alpha1.MyApp](false),
		text:   `{"metadata":{"name":"a","managedFields":[{"manager":"m","manager":"n"}],"uid":"u"},"spec":{"image":"i"}}`,
		want:   `{"metadata":{"name":"a","uid":"u"},"spec":{"image":"i"}}`,
		ok:     true,
	}, {
		name:   "ManagedFieldsStillJSON",
		reason: "what is left out is still read as JSON",
		prune:  prunedAs[v1alpha1.MyApp](false),
		text:   `{"metadata":{"managedFields":[{"manager":}]}}`,
	}, {
		name:   "RepeatedNameOutsideManagedFields",
		reason: "every other object has its names checked",
		prune:  prunedAs[v1alpha1.MyApp](false),
		text:   `{"metadata":{"managedFields":[],"name":"a","name":"b"}}`,
	}, {
		name:   "EscapedNameIsTheSameMember",
		reason: "members are matched by their unquoted names, as the decoder matches them",
		prune:  prunedAs[v1alpha1.MyApp](false),
		text:   `{"m\u0065tadata":{"managed\u0046ields":[1]}}`,
		want:   `{"m\u0065tadata":{}}`,
		ok:     true,
	}, {
		name:   "OtherCaseIsAnotherMember",
		reason: "the decoder matches names case-sensitively, so Metadata is not metadata",
		prune:  prunedAs[v1alpha1.MyApp](false),
		text:   `{"Metadata":{"managedFields":[1]}}`,
		want:   `{"Metadata":{"managedFields":[1]}}`,
		ok:     true,
	}, {
		name:   "NotAnObjectRefused",
		reason: "a value of another type than the tree expects is refused (the slow decoder gives the error)",
		prune:  prunedAs[v1alpha1.MyApp](false),
		text:   `{"metadata":[1,2],"spec":null}`,
	}, {
		name:   "WhiteSpaceInsideKeptValues",
		reason: "white space anywhere is read as encoding/json reads it",
		prune:  prunedAs[v1alpha1.MyApp](false),
		text:   "{ \"metadata\" : { \"managedFields\" : [ ] , \"labels\" : { \"a\" : \"b\" } } }",
		want:   `{"metadata":{"labels":{ "a" : "b" }}}`,
		ok:     true,
	}, {
		name:   "ParentPodSpecWhole",
		reason: "a pod spec is cut only in observed objects: a parent is decoded whole but for managedFields",
		prune:  prunedAs[appsv1.StatefulSet](false),
		text:   `{"spec":{"template":{"spec":{"volumes":[{"name":"v"}],"containers":[{"name":"c","env":[]}]}}}}`,
		want:   `{"spec":{"template":{"spec":{"volumes":[{"name":"v"}],"containers":[{"name":"c","env":[]}]}}}}`,
		ok:     true,
	}, {
		name:   "ObservedPodSpecCut",
		reason: "of an observed pod spec, hooks read the containers' and init containers' names and images",
		prune:  prunedAs[appsv1.StatefulSet](true),
		text: `{"spec":{"replicas":2,"template":{"metadata":{"labels":{"a":"b"}},"spec":{"volumes":[{"name":"v"}],` +
			`"initContainers":[{"name":"i","command":["sh","-c","a\nb"],"image":"x:1"}],"containers":[{"name":"c","env":[],"image":"y:2"},null]}}}}`,
		want: `{"spec":{"replicas":2,"template":{"metadata":{"labels":{"a":"b"}},"spec":{` +
			`"initContainers":[{"name":"i","image":"x:1"}],"containers":[{"name":"c","image":"y:2"},null]}}}}`,
		ok: true,
	}, {
		name:   "ObservedPodSpecNamesChecked",
		reason: "what a pod spec leaves out has its names checked",
		prune:  prunedAs[appsv1.StatefulSet](true),
		text:   `{"spec":{"template":{"spec":{"volumes":[{"name":"v","name":"w"}]}}}}`,
	}, {
		name:   "ObservedCronJobPodSpecCut",
		reason: "a pod spec is found by its type, wherever it is",
		prune:  prunedAs[batchv1.CronJob](true),
		text:   `{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"b","args":["x"]}]}}}}}}`,
		want:   `{"spec":{"jobTemplate":{"spec":{"template":{"spec":{"containers":[{"name":"b"}]}}}}}}`,
		ok:     true,
	}, {
		name:   "ObservedPodCut",
		reason: "a pod's own spec is cut; its status is read whole",
		prune:  prunedAs[corev1.Pod](true),
		text:   `{"spec":{"nodeName":"n","containers":[]},"status":{"phase":"Running"}}`,
		want:   `{"spec":{"containers":[]},"status":{"phase":"Running"}}`,
		ok:     true,
	}, {
		name:   "LastAppliedLeftOut",
		reason: "Metacontroller's and kubectl's last applied configuration is a whole object again, never read",
		prune:  prunedAs[corev1.ConfigMap](true),
		text: `{"metadata":{"annotations":{"metacontroller.k8s.io/last-applied-configuration":"{\"a\":1}",` +
			`"kubectl.kubernetes.io/last-applied-configuration":"{}","other":"kept"}},"data":{"k":"v"}}`,
		want: `{"metadata":{"annotations":{"other":"kept"}},"data":{"k":"v"}}`,
		ok:   true,
	}, {
		name:   "LastAppliedNotAStringRefused",
		reason: "a last applied configuration that is no string is decoded, and refused as the slow decoder refuses it",
		prune:  prunedAs[corev1.ConfigMap](true),
		text:   `{"metadata":{"annotations":{"metacontroller.k8s.io/last-applied-configuration":7}}}`,
	}, {
		name:   "LastAppliedLeftOutOfParents",
		reason: "kubectl apply writes the whole parent again into it; no hook reads it",
		prune:  prunedAs[v1alpha1.MyApp](false),
		text:   `{"metadata":{"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}","example.com/x":"y"}}}`,
		want:   `{"metadata":{"annotations":{"example.com/x":"y"}}}`,
		ok:     true,
	}, {
		name:   "RepeatedAnnotationStillRefused",
		reason: "the annotations object has its names checked, the one left out included",
		prune:  prunedAs[corev1.ConfigMap](true),
		text:   `{"metadata":{"annotations":{"metacontroller.k8s.io/last-applied-configuration":"a","metacontroller.k8s.io/last-applied-configuration":"b"}}}`,
	}, {
		name:   "SelfDecodingTypeWhole",
		reason: "a quantity decodes itself from its whole value",
		prune:  prunedAs[resource.Quantity](true),
		text:   `"1Gi"`,
		want:   `"1Gi"`,
		ok:     true,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			diff, ok := tc.prune(t, tc.text, tc.want)
			if ok != tc.ok {
				t.Fatalf("%s\ndecoding %s: ok = %v, want %v", tc.reason, tc.text, ok, tc.ok)
			}
			if diff != "" {
				t.Errorf("%s\ndecoding %s: -want %s +got:\n%s", tc.reason, tc.text, tc.want, diff)
			}
		})
	}
}

func TestPruneTreeOf(t *testing.T) {
	cases := []struct {
		reason   string
		typ      reflect.Type
		observed bool
		want     bool // a tree: something is left out
	}{
		{"a quantity decodes itself", reflect.TypeFor[resource.Quantity](), true, false},
		{"nothing in a container status is left out", reflect.TypeFor[corev1.ContainerStatus](), true, false},
		{"a parent leaves out managedFields", reflect.TypeFor[v1alpha1.MyApp](), false, true},
		{"a pointer's tree is its element's", reflect.TypeFor[*appsv1.StatefulSet](), true, true},
		{"a container has nothing left out, observed or not", reflect.TypeFor[corev1.Container](), true, false},
		{"a pod spec outside an observed object has managedFields in its ephemeral volume templates", reflect.TypeFor[corev1.PodSpec](), false, true},
		{"an observed pod spec is cut", reflect.TypeFor[corev1.PodSpec](), true, true},
	}
	for _, tc := range cases {
		if got := pruneTreeOf(tc.typ, tc.observed) != nil; got != tc.want {
			t.Errorf("%s: pruneTreeOf(%v, observed %v) != nil is %v, want %v", tc.reason, tc.typ, tc.observed, got, tc.want)
		}
	}
	if pruneTreeOf(reflect.TypeFor[appsv1.StatefulSet](), true) != pruneTreeOf(reflect.TypeFor[appsv1.StatefulSet](), true) {
		t.Error("pruneTreeOf builds the same tree twice; it is cached per type")
	}
}

// TestReadsTree: an ObservedReads tree decodes the members it names as the
// observed tree does, drops every other one unbuilt (names checked, but in
// managedFields), and refuses a path its type has no member for.
func TestReadsTree(t *testing.T) {
	tree, err := readsTree(reflect.TypeFor[appsv1.StatefulSet](), []string{"metadata.name", "metadata.annotations", "spec.replicas", "spec.template.spec", "status"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		reason, text, want string
		ok                 bool
	}{{
		reason: "named members kept as the observed tree keeps them, the others left out",
		text: `{"metadata":{"name":"a","labels":{"l":"1"},"annotations":{"x":"1","kubectl.kubernetes.io/last-applied-configuration":"{}"},"managedFields":[{"manager":"m","manager":"n"}],"uid":"u"},` +
			`"spec":{"replicas":2,"serviceName":"s","selector":{"matchLabels":{"l":"1"}},"template":{"metadata":{"labels":{"l":"1"}},"spec":{"containers":[{"name":"c","image":"i","args":["x"]}],"dnsPolicy":"ClusterFirst"}}},"status":{"replicas":2,"readyReplicas":1}}`,
		want: `{"metadata":{"name":"a","annotations":{"x":"1"}},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{"replicas":2,"readyReplicas":1}}`,
		ok:   true,
	}, {
		reason: "a member left out still has its names checked",
		text:   `{"metadata":{"name":"a"},"spec":{"selector":{"matchLabels":{"l":"1","l":"2"}}}}`,
	}, {
		reason: "a member left out is still read as JSON",
		text:   `{"metadata":{"name":"a","labels":{"l":}}}`,
	}, {
		reason: "a named member of the wrong type is refused",
		text:   `{"spec":{"replicas":"two"}}`,
	}}
	for _, tc := range cases {
		var got appsv1.StatefulSet
		s := newScanner([]byte(tc.text))
		end, ok := s.decode(0, &got, tree)
		ok = ok && end == len(tc.text)
		s.release()
		if ok != tc.ok {
			t.Errorf("%s: decoding %s took it: %v, want %v", tc.reason, tc.text, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		var want appsv1.StatefulSet
		if err := decodeSlow([]byte(tc.want), &want); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got, probeOptions); diff != "" {
			t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
		}
	}
	for _, paths := range [][]string{{"spec.replica"}, {"metadata.labels.l"}, {"status.replicas.x"}, {"nothing"}} {
		if _, err := readsTree(reflect.TypeFor[appsv1.StatefulSet](), paths); err == nil {
			t.Errorf("readsTree(StatefulSet, %q) took a path StatefulSet has no member at", paths)
		}
	}
}
