package composite

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	dbv1 "metahooks/api/v1"
	"metahooks/api/v1alpha1"
)

// requestFiles are every request body the repo keeps: the captured
// Metacontroller requests and the examples.
func requestFiles(t testing.TB) map[string][]byte {
	var files []string
	for _, pattern := range []string{"../../server/testdata/metacontroller/*-*.json", "../../examples/requests/*.json", "../../server/testdata/render/*.json"} {
		matched, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matched...)
	}
	bodies := map[string][]byte{}
	for _, file := range files {
		if strings.HasSuffix(file, "request-headers.json") {
			continue
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		bodies[filepath.Base(file)] = raw
	}
	if len(bodies) < 15 {
		t.Fatalf("found only %d request files", len(bodies))
	}
	return bodies
}

// ignorePrefetched leaves out of a comparison of Requests what the scan
// decoded for a Prefetch (prefetch_test.go checks it).
var ignorePrefetched = cmpopts.IgnoreUnexported(Request{})

// slowRequest decodes a request the way DecodeRequest did before scanRequest.
func slowRequest(t testing.TB, body []byte) *Request {
	var req Request
	if err := decodeSlow(body, &req); err != nil {
		t.Fatalf("slow decode: %v", err)
	}
	return &req
}

func TestScanRequestMatchesSlowDecoder(t *testing.T) {
	bodies := requestFiles(t)
	edges := map[string]string{
		"null children and a null type":  `{"parent":{"a":1},"children":{"ConfigMap.v1":null},"related":null,"finalizing":null}`,
		"keys in other case are unknown": `{"parent":{"a":1},"Parent":{"b":2},"Children":{"x":{}},"Finalizing":true}`,
		"unknown fields skipped":         `{"x":[1,{"y":null}],"parent":{},"finalizing":true,"controller":{"spec":{}}}`,
		"escaped names":                  `{"p\u0061rent":{"a":1},"children":{"Config\u004dap.v1":{"n\u0061me":{"metadata":{"name":"n"},"z":1}}}}`,
		"controller null":                `{"parent":{},"controller":null}`,
		"white space kept inside values": "{ \"parent\" : { \"a\" : [ 1 , 2 ] } , \"children\" : { } }\n",
		"names repeated inside raw values": `{"parent":{"a":1,"a":2},"controller":{"x":1,"x":2},"y":{"z":1,"z":2},` +
			`"children":{"ConfigMap.v1":{"c":{"metadata":{"name":"c","labels":{"l":"1","l":"2"}},"data":{"k":"1","k":"2"}}}},` +
			`"related":{"Pod.v1":{"p":{"metadata":{"name":"p"},"spec":{"a":[{"b":1,"b":2}]}}}}}`,
	}
	for name, body := range edges {
		bodies[name] = []byte(body)
	}
	for name, body := range bodies {
		trimmed := bytes.TrimSpace(body)
		got, ok := scanRequest(trimmed, nil, newCostBudget(trimmed))
		if !ok {
			t.Errorf("%s: scanRequest refused a request the slow decoder takes", name)
			continue
		}
		if diff := cmp.Diff(slowRequest(t, trimmed), got, ignorePrefetched); diff != "" {
			t.Errorf("%s: scanRequest -slow +scan:\n%s", name, diff)
		}
	}
}

func TestScanRequestLeavesErrorsToSlowDecoder(t *testing.T) {
	for reason, body := range map[string]string{
		"children not an object":        `{"parent":{},"children":[]}`,
		"a type not an object":          `{"parent":{},"children":{"ConfigMap.v1":[]}}`,
		"finalizing a string":           `{"parent":{},"finalizing":"yes"}`,
		"repeated top-level name":       `{"parent":{},"parent":{"a":1}}`,
		"repeated type key":             `{"parent":{},"children":{"A.v1":{},"A.v1":{"x":{}}}}`,
		"repeated child name":           `{"parent":{},"children":{"A.v1":{"a":{"v":1},"a":{"v":2}}}}`,
		"repeated child metadata":       `{"parent":{},"children":{"A.v1":{"a":{"metadata":{"name":"a"},"metadata":{"name":"b"}}}}}`,
		"repeated child name field":     `{"parent":{},"children":{"A.v1":{"a":{"metadata":{"name":"a","name":"b"}}}}}`,
		"repeated after a raw value":    `{"parent":{},"children":{"A.v1":{"a":{"metadata":{"labels":{"l":"1","l":"2"},"name":"a","name":"b"}}}}}`,
		"repeated after the controller": `{"controller":{"x":1,"x":2},"parent":{},"parent":{}}`,
		"trailing data":                 `{"parent":{}} {}`,
		"malformed inside a child":      `{"parent":{},"children":{"A.v1":{"x":{"a":}}}}`,
		"a null child":                  `{"parent":{},"children":{"A.v1":{"x":null}}}`,
		"a child without metadata":      `{"parent":{},"children":{"A.v1":{"x":{}}}}`,
		"a child without a name":        `{"parent":{},"children":{"A.v1":{"x":{"metadata":{"namespace":"a"}}}}}`,
		"a child with an empty name":    `{"parent":{},"related":{"A.v1":{"x":{"metadata":{"name":""}}}}}`,
		"malformed in unknown field":    `{"parent":{},"x":[1,,2]}`,
		"not an object":                 `[{"parent":{}}]`,
		"ends after a name":             `{"parent":`,
		"ends after a child's name":     `{"parent":{},"children":{"A.v1":{"a":`,
		"ends after a metadata name":    `{"parent":{},"children":{"A.v1":{"a":{"metadata":{"name":`,
		"ends inside an array":          `{"parent":{},"x":[1,`,
	} {
		if _, ok := scanRequest([]byte(body), nil, newCostBudget([]byte(body))); ok {
			t.Errorf("%s: scanRequest took %s; it must leave it to the slow decoder", reason, body)
		}
	}
}

// TestDecodeRequestErrorsUnchanged: what scanRequest refuses still gets the
// slow decoder's error, naming the field.
func TestDecodeRequestErrorsUnchanged(t *testing.T) {
	_, err := DecodeRequest([]byte(`{"parent":{},"finalizing":"yes"}`))
	var reqErr *RequestError
	if !errorsAs(err, &reqErr) || reqErr.Field != "finalizing" {
		t.Fatalf("DecodeRequest(finalizing: \"yes\") = %v, want a *RequestError on finalizing", err)
	}
}

func errorsAs(err error, target **RequestError) bool {
	e, ok := err.(*RequestError)
	*target = e
	return ok
}

// typedFor returns a new typed object for a child type key or a parent kind.
func typedFor(kind string) any {
	switch kind {
	case "StatefulSet.apps/v1":
		return &appsv1.StatefulSet{}
	case "Service.v1":
		return &corev1.Service{}
	case "ConfigMap.v1":
		return &corev1.ConfigMap{}
	case "Secret.v1":
		return &corev1.Secret{}
	case "PersistentVolumeClaim.v1":
		return &corev1.PersistentVolumeClaim{}
	case "CronJob.batch/v1":
		return &batchv1.CronJob{}
	case "Job.batch/v1":
		return &batchv1.Job{}
	case "PodDisruptionBudget.policy/v1":
		return &policyv1.PodDisruptionBudget{}
	case "MyApp":
		return &v1alpha1.MyApp{}
	case "Database":
		return &dbv1.Database{}
	}
	return nil
}

// withoutUnread clears what DecodeObject leaves out of every object:
// metadata.managedFields and the last applied configuration annotations.
func withoutUnread(obj any) any {
	if o, ok := obj.(metav1.Object); ok {
		o.SetManagedFields(nil)
		if annotations := o.GetAnnotations(); annotations != nil {
			delete(annotations, "metacontroller.k8s.io/last-applied-configuration")
			delete(annotations, "kubectl.kubernetes.io/last-applied-configuration")
		}
	}
	return obj
}

// TestDecodeObjectMatchesSlowDecoder: every parent, child and related object
// of every kept request decodes to the same typed value as with
// the slow decoder (sigs.k8s.io/json), but for what is left out
// (withoutUnread).
func TestDecodeObjectMatchesSlowDecoder(t *testing.T) {
	decoded := 0
	for name, body := range requestFiles(t) {
		req := slowRequest(t, body)
		objects := map[string]json.RawMessage{}
		var kind struct{ Kind string }
		if err := json.Unmarshal(req.Parent, &kind); err == nil && typedFor(kind.Kind) != nil {
			objects[kind.Kind+" parent"] = req.Parent
		}
		for _, m := range []ChildMap{req.Children, req.Related} {
			for typeKey, byName := range m {
				for objName, raw := range byName {
					objects[typeKey+" "+objName] = raw
				}
			}
		}
		for what, raw := range objects {
			typeKey, _, _ := strings.Cut(what, " ")
			if strings.HasSuffix(what, " parent") {
				typeKey = strings.TrimSuffix(what, " parent")
			}
			fast, slow := typedFor(typeKey), typedFor(typeKey)
			if fast == nil {
				t.Fatalf("%s: no typed object for %s", name, typeKey)
			}
			fastErr := DecodeObject(raw, fast)
			if slowErr := decodeSlow(raw, slow); slowErr != nil {
				if fastErr == nil { // myapp-invalid.json, say
					t.Errorf("%s %s: DecodeObject took what the slow decoder refuses (%v)", name, what, slowErr)
				}
				continue
			}
			if fastErr != nil {
				t.Errorf("%s %s: DecodeObject: %v", name, what, fastErr)
				continue
			}
			if diff := cmp.Diff(withoutUnread(slow), fast); diff != "" {
				t.Errorf("%s %s: DecodeObject -slow +fast:\n%s", name, what, diff)
			}
			decoded++
		}
	}
	if decoded < 50 {
		t.Errorf("compared only %d objects", decoded)
	}
}

func TestDecodeObject(t *testing.T) {
	cases := map[string]struct {
		reason, raw string
		want        *appsv1.StatefulSet
		wantErr     string
	}{
		"CaseSensitive": {
			reason: "the API server matches names exactly: Spec is not spec",
			raw:    `{"metadata":{"name":"a"},"Spec":{"replicas":3},"spec":{"serviceName":"s"}}`,
			want:   &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: appsv1.StatefulSetSpec{ServiceName: "s"}},
		},
		"SkipsManagedFields": {
			reason: "managedFields is never built, even when it is not what the API server would write",
			raw:    `{"metadata":{"name":"a","managedFields":[{"manager":7,"fieldsV1":{"f:x":{}}}]}}`,
			want:   &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		},
		"StringMaps": {
			reason: "maps of strings decode as both decoders decode them: {} is an empty map, null none, a null member the empty string",
			raw:    `{"metadata":{"name":"a","labels":{},"annotations":null},"spec":{"selector":{"matchLabels":{"app":"x","tier":null}}}}`,
			want: &appsv1.StatefulSet{
				ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: map[string]string{}},
				Spec:       appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "x", "tier": ""}}},
			},
		},
		"StringMapWithANumberNamesThePath": {
			reason:  "a map member that is not a string still gets the slow decoder's error and path",
			raw:     `{"metadata":{"labels":{"app":7}}}`,
			wantErr: "metadata.labels: wrong type: got a JSON number, want string",
		},
		"StringMapWithARepeatedName": {
			reason:  "a name repeated in a map is refused with its path, as in any other object",
			raw:     `{"metadata":{"labels":{"app":"x","app":"y"}}}`,
			wantErr: "metadata.labels.app: duplicate key: a key may appear only once in an object",
		},
		"ManagedFieldsMayRepeatNames": {
			reason: "managedFields is only checked to be JSON, and JSON allows a repeated name",
			raw:    `{"metadata":{"name":"a","managedFields":[{"manager":"m","manager":"n","fieldsV1":{"f:x":{},"f:x":{}}}]}}`,
			want:   &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		},
		"RepeatedNameAfterManagedFields": {
			reason:  "names are checked again once managedFields is skipped",
			raw:     `{"metadata":{"managedFields":[{"a":1,"a":2}],"name":"a","name":"b"}}`,
			wantErr: "metadata.name: duplicate key: a key may appear only once in an object",
		},
		"ManagedFieldsMalformed": {
			reason:  "what managedFields skips is still read as JSON",
			raw:     `{"metadata":{"name":"a","managedFields":[{"manager":}]}}`,
			wantErr: "malformed JSON at byte 53",
		},
		"WrongTypeNamesThePath": {
			reason:  "a wrong type still gets the slow decoder's error and path",
			raw:     `{"spec":{"replicas":"two"}}`,
			wantErr: "spec.replicas: wrong type: got a JSON string, want int32",
		},
		"MalformedJSON": {
			reason:  "malformed JSON still gets the byte offset",
			raw:     `{"spec":{"replicas":}}`,
			wantErr: "malformed JSON at byte 21",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got appsv1.StatefulSet
			err := DecodeObject([]byte(tc.raw), &got)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("%s\nDecodeObject(%s) error = %v, want %q", tc.reason, tc.raw, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nDecodeObject(%s): %v", tc.reason, tc.raw, err)
			}
			if diff := cmp.Diff(tc.want, &got); diff != "" {
				t.Errorf("%s\nDecodeObject(%s): -want +got:\n%s", tc.reason, tc.raw, diff)
			}
		})
	}
}

// FuzzDecodeObject: whatever the fast decoder takes, decodeSlow takes
// too and decodes to the same value; so the fast path never accepts what the
// API server's decoder refuses, but for managedFields, which it only checks
// to be JSON.
func FuzzDecodeObject(f *testing.F) {
	for _, body := range requestFiles(f) {
		var req Request
		if decodeSlow(body, &req) != nil {
			continue
		}
		f.Add(0, []byte(req.Parent))
		for typeKey, byName := range req.Children {
			for _, raw := range byName {
				f.Add(kindIndex(typeKey), []byte(raw))
			}
		}
	}
	f.Add(1, []byte(`{"data":{"a":"aGk=\n"},"type":null,"metadata":{"labels":{"a":null}}}`))
	f.Fuzz(func(t *testing.T, kind int, raw []byte) {
		typeKey := fuzzKinds[(kind%len(fuzzKinds)+len(fuzzKinds))%len(fuzzKinds)]
		fast := typedFor(typeKey)
		if !decodeFast(raw, fast) {
			if !reflect.ValueOf(fast).Elem().IsZero() {
				t.Fatalf("decodeFast failed but left a value behind")
			}
			return
		}
		slow := typedFor(typeKey)
		if err := decodeSlow(raw, slow); err != nil {
			if strings.Contains(err.Error(), "managedFields") || slowTakesWithoutManagedFields(raw, typeKey) {
				return // skipped on purpose: checked only to be JSON
			}
			t.Fatalf("fast decode took %q as %s, sigs.k8s.io/json refuses it: %v", raw, typeKey, err)
		}
		if diff := cmp.Diff(withoutUnread(slow), withoutUnread(fast)); diff != "" {
			t.Fatalf("%s %q: -slow +fast:\n%s", typeKey, raw, diff)
		}
	})
}

// slowTakesWithoutManagedFields reports whether the slow decoder takes raw
// once its metadata.managedFields is taken out: its error was in what the
// fast decoder skips, though not every error there names the field (a
// metav1.Time's parse error does not).
func slowTakesWithoutManagedFields(raw []byte, typeKey string) bool {
	var object, metadata map[string]json.RawMessage
	if json.Unmarshal(raw, &object) != nil || json.Unmarshal(object["metadata"], &metadata) != nil {
		return false
	}
	if _, ok := metadata["managedFields"]; !ok {
		return false
	}
	delete(metadata, "managedFields")
	var err error
	if object["metadata"], err = json.Marshal(metadata); err != nil {
		return false
	}
	stripped, err := json.Marshal(object)
	return err == nil && decodeSlow(stripped, typedFor(typeKey)) == nil
}

var fuzzKinds = []string{"StatefulSet.apps/v1", "Secret.v1", "ConfigMap.v1", "CronJob.batch/v1", "PersistentVolumeClaim.v1", "MyApp", "Database", "Service.v1", "Job.batch/v1"}

func kindIndex(typeKey string) int {
	for i, k := range fuzzKinds {
		if k == typeKey {
			return i
		}
	}
	return 0
}

// FuzzScanRequest: whatever scanRequest takes, the slow decoder takes too and
// reads the same Request from.
func FuzzScanRequest(f *testing.F) {
	for _, body := range requestFiles(f) {
		f.Add(body)
	}
	f.Add([]byte(`{"parent":{},"children":{"A.v1":{"a":1,"a":null}},"related":null,"finalizing":true}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, ok := scanRequest(body, nil, newCostBudget(body))
		if !ok {
			return
		}
		var want Request
		if err := decodeSlow(body, &want); err != nil {
			t.Fatalf("scanRequest took %q, the slow decoder refuses it: %v", body, err)
		}
		if diff := cmp.Diff(&want, got, ignorePrefetched); diff != "" {
			t.Fatalf("scanRequest(%q) -slow +scan:\n%s", body, diff)
		}
	})
}

// TestDecodeFastAgreesOnEdges: documents at the edges where encoding/json's
// rules and json v2's differ (nulls into quantities, times and pointers,
// base64 with line breaks or without padding, lone surrogates, invalid UTF-8,
// numbers written oddly): whatever decodeFast takes, decodeSlow takes and
// decodes the same.
func TestDecodeFastAgreesOnEdges(t *testing.T) {
	cases := []struct{ typeKey, raw string }{
		{"StatefulSet.apps/v1", `{"spec":{"template":{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":null,"memory":"1Gi"}}}]}}}}`},
		{"StatefulSet.apps/v1", `{"metadata":{"creationTimestamp":null,"labels":null},"spec":{"replicas":null,"selector":null}}`},
		{"StatefulSet.apps/v1", `{"spec":{"replicas":1e0}}`},
		{"StatefulSet.apps/v1", `{"spec":{"replicas":-0}}`},
		{"StatefulSet.apps/v1", `{"spec":{"replicas":1.0}}`},
		{"StatefulSet.apps/v1", `{"spec":{"replicas":2147483648}}`},
		{"StatefulSet.apps/v1", `{"status":{"conditions":[{"type":"x","lastTransitionTime":""}]}}`},
		{"StatefulSet.apps/v1", `{"metadata":{"deletionTimestamp":"not a time"}}`},
		{"StatefulSet.apps/v1", `{"metadata":{"name":"a","Name":"b","NAME":"c"}}`},
		{"StatefulSet.apps/v1", `{"spec":[]}`},
		{"StatefulSet.apps/v1", `{"spec":{"template":{"spec":{"volumes":[{"name":"t","emptyDir":{}}]}}}}`},
		{"Service.v1", `{"spec":{"ports":[{"port":5432,"targetPort":"pg"},{"port":1,"targetPort":8080}]}}`},
		{"Service.v1", `{"spec":{"ports":[{"targetPort":null}]}}`},
		{"Secret.v1", `{"data":{"a":"aGk=\r\n","b":"aGk=","c":""}}`},
		{"Secret.v1", `{"data":{"a":"aGk"}}`},
		{"Secret.v1", `{"data":{"a":"a G k ="}}`},
		{"Secret.v1", `{"data":{"a":null},"stringData":{"b":"x"}}`},
		{"ConfigMap.v1", `{"data":{"a":"\ud800","b":"\udc00\ud800x"}}`},
		{"ConfigMap.v1", "{\"data\":{\"a\":\"\xff\xfe\"}}"},
		{"ConfigMap.v1", `{"data":{"a":1}}`},
		{"ConfigMap.v1", `{"binaryData":{"a":"AAEC"},"immutable":null}`},
		{"CronJob.batch/v1", `{"status":{"lastSuccessfulTime":"2026-12-01T02:00:00Z","active":[{"name":"j"}]}}`},
		{"PersistentVolumeClaim.v1", `{"spec":{"resources":{"requests":{"storage":"10Gi"}}},"status":{"capacity":{"storage":"1e3"}}}`},
		{"PersistentVolumeClaim.v1", `{"spec":{"resources":{"requests":{"storage":"ten"}}}}`},
		{"MyApp", `{"spec":{"replicaCount":3,"image":"x","storage":{"size":"1Gi"},"config":{"a":"b"}}}`},
		{"Database", `{"spec":{"size":"medium","unknown":{"deep":[1,2,{"x":null}]}}}`},
	}
	taken := 0
	for _, tc := range cases {
		fast, slow := typedFor(tc.typeKey), typedFor(tc.typeKey)
		fastOK := decodeFast([]byte(tc.raw), fast)
		slowErr := decodeSlow([]byte(tc.raw), slow)
		if !fastOK {
			continue // DecodeObject answers with decodeSlow's result
		}
		taken++
		if slowErr != nil {
			t.Errorf("%s %s: decodeFast took it, decodeSlow refuses it: %v", tc.typeKey, tc.raw, slowErr)
			continue
		}
		if diff := cmp.Diff(withoutUnread(slow), withoutUnread(fast)); diff != "" {
			t.Errorf("%s %s: -slow +fast:\n%s", tc.typeKey, tc.raw, diff)
		}
	}
	if taken < len(cases)/2 {
		t.Errorf("decodeFast took only %d of %d documents; the comparison says little", taken, len(cases))
	}
}

// onlyWhatHooksRead is what decodeObserved leaves of a fully decoded object:
// what withoutUnread leaves, with every pod spec cut to its containers' and
// init containers' names and images.
func onlyWhatHooksRead(obj any) any {
	names := func(containers []corev1.Container) []corev1.Container {
		cut := slices.Clone(containers) // nil stays nil, empty stays empty
		for i := range cut {
			cut[i] = corev1.Container{Name: cut[i].Name, Image: cut[i].Image}
		}
		return cut
	}
	cut := func(spec *corev1.PodSpec) {
		*spec = corev1.PodSpec{InitContainers: names(spec.InitContainers), Containers: names(spec.Containers)}
	}
	switch o := withoutUnread(obj).(type) {
	case *appsv1.StatefulSet:
		cut(&o.Spec.Template.Spec)
	case *batchv1.CronJob:
		cut(&o.Spec.JobTemplate.Spec.Template.Spec)
	case *batchv1.Job:
		cut(&o.Spec.Template.Spec)
	case *corev1.Pod:
		cut(&o.Spec)
	}
	return obj
}

// TestDecodeObservedMatchesSlowDecoder: every child and related object of
// every kept request decodes through Observed's path to what the slow
// decoder gives with managedFields dropped and pod specs cut to the
// containers' and init containers' names and images.
func TestDecodeObservedMatchesSlowDecoder(t *testing.T) {
	decoded, cut := 0, 0
	for name, body := range requestFiles(t) {
		req := slowRequest(t, body)
		for _, m := range []ChildMap{req.Children, req.Related} {
			for typeKey, byName := range m {
				for objName, raw := range byName {
					fast, slow := typedFor(typeKey), typedFor(typeKey)
					if typeKey == "Pod.v1" {
						fast, slow = &corev1.Pod{}, &corev1.Pod{}
					}
					if fast == nil {
						t.Fatalf("%s: no typed object for %s", name, typeKey)
					}
					if err := decodeSlow(raw, slow); err != nil {
						continue
					}
					if err := decodeObserved(raw, fast); err != nil {
						t.Errorf("%s %s %s: decodeObserved: %v", name, typeKey, objName, err)
						continue
					}
					full := reflect.ValueOf(slow).Elem().Interface()
					if diff := cmp.Diff(onlyWhatHooksRead(slow), fast); diff != "" {
						t.Errorf("%s %s %s: decodeObserved -slow, cut +fast:\n%s", name, typeKey, objName, diff)
					}
					if !cmp.Equal(full, reflect.ValueOf(fast).Elem().Interface()) {
						cut++
					}
					decoded++
				}
			}
		}
	}
	if decoded < 40 || cut < 10 {
		t.Errorf("compared only %d objects, %d of them with something cut", decoded, cut)
	}
}

func TestDecodeObserved(t *testing.T) {
	cases := map[string]struct {
		reason, raw string
		want        *appsv1.StatefulSet
		wantErr     string
	}{
		"PodSpecCutToContainerNamesAndImages": {
			reason: "no hook reads more of an observed pod spec; the rest is never built",
			raw: `{"metadata":{"name":"a","managedFields":[{"manager":"m"}]},"spec":{"replicas":2,"template":{"metadata":{"annotations":{"k":"v"}},` +
				`"spec":{"containers":[{"name":"c","image":"i:1","env":[{"name":"E","value":"x"}]}],"volumes":[{"name":"v","emptyDir":{}}]}}}}`,
			want: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: appsv1.StatefulSetSpec{
				Replicas: ptrTo[int32](2),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"k": "v"}},
					Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i:1"}}},
				},
			}},
		},
		"InitContainersKept": {
			reason: "init containers' names and images are read too: kube.TemplateChange compares them (the restore init container going away rolls the pods)",
			raw: `{"metadata":{"name":"a"},"spec":{"template":{"spec":{"initContainers":[{"name":"restore","image":"b:1","command":["sh"]}],` +
				`"containers":[{"name":"c","image":"i:1"}]}}}}`,
			want: &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: appsv1.StatefulSetSpec{
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{{Name: "restore", Image: "b:1"}},
					Containers:     []corev1.Container{{Name: "c", Image: "i:1"}},
				}},
			}},
		},
		"MalformedSkippedFieldIsNoError": {
			reason: "what is skipped is only checked to be JSON, as managedFields is",
			raw:    `{"metadata":{"name":"a"},"spec":{"template":{"spec":{"volumes":"not a list"}}}}`,
			want:   &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		},
		"WrongTypeInWhatIsReadNamesThePath": {
			reason:  "a container's image is read, so a wrong type there gets the slow decoder's error and path",
			raw:     `{"metadata":{"name":"a"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":7}]}}}}`,
			wantErr: "spec.template.spec.containers.image: wrong type: got a JSON number, want string",
		},
		"WrongTypeElsewhereNamesThePath": {
			reason:  "outside pod specs everything is decoded and checked as before",
			raw:     `{"metadata":{"name":"a"},"status":{"readyReplicas":"1"}}`,
			wantErr: "status.readyReplicas: wrong type: got a JSON string, want int32",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got appsv1.StatefulSet
			err := decodeObserved([]byte(tc.raw), &got)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("%s\ndecodeObserved(%s) error = %v, want %q", tc.reason, tc.raw, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\ndecodeObserved(%s): %v", tc.reason, tc.raw, err)
			}
			if diff := cmp.Diff(tc.want, &got); diff != "" {
				t.Errorf("%s\ndecodeObserved(%s): -want +got:\n%s", tc.reason, tc.raw, diff)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

// TestRepeatedNameCostIsLinear: on the slow path the path of a repeated
// name is built once, for that name, and a long name in it is quoted by its
// prefix. Before, the path was built for every member: a 141 KB body (a
// 100 KB name above 4,000 members and a repeated key) allocated 427 MB and
// named the whole 100 KB name in its error.
func TestRepeatedNameCostIsLinear(t *testing.T) {
	for _, tc := range []struct {
		reason   string
		name     string // the long member name
		members  int
		repeated string // where the repeated key is
	}{
		{"a long unknown member above many members", strings.Repeat("k", 100<<10), 4000, `"d":1,"d":2`},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			var b strings.Builder
			b.WriteString(`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"demo","namespace":"apps"},"spec":{"image":"x","` + tc.name + `":{`)
			for i := range tc.members {
				b.WriteString(`"m` + strconv.Itoa(i) + `":1,`)
			}
			b.WriteString(tc.repeated + `}}},"children":{}}`)
			body := []byte(b.String())
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			req, err := DecodeRequest(body)
			if err == nil {
				err = req.DecodeParent(&v1alpha1.MyApp{}, myAppKind)
			}
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			if err == nil || !strings.Contains(err.Error(), duplicateKey) {
				t.Fatalf("error %.200v, want the repeated key", err)
			}
			if len(err.Error()) > 512 {
				t.Errorf("error has %d bytes: %.300s", len(err.Error()), err)
			}
			// Linear: a fixed multiple of the body (the slow path reads it
			// more than once, the quantity bound's pass included). Building
			// every member's path eagerly allocated 427 MB here, 3,000 times
			// the body.
			if limit := uint64(32 * len(body)); allocated > limit {
				t.Errorf("%d bytes allocated for a %d-byte body, want at most %d", allocated, len(body), limit)
			}
		})
	}
}

func TestJSONPathString(t *testing.T) {
	long := strings.Repeat("n", MaxQuoted+1)
	for _, tc := range []struct {
		reason string
		path   *jsonPath
		want   string
	}{
		{"the root is empty", nil, ""},
		{"a member", (*jsonPath)(nil).member("spec"), "spec"},
		{"members and elements", (*jsonPath)(nil).member("spec").member("containers").element(0).member("name"), "spec.containers[0].name"},
		{"a long name is quoted by its prefix", (*jsonPath)(nil).member("spec").member(long), `spec."` + long[:MaxQuoted] + `"…(65 bytes)`},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.path.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
		})
	}
}
