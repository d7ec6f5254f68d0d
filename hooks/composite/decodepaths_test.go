package composite

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dbv1 "metahooks/api/v1"
	"metahooks/api/v1alpha1"
)

// The request decoder's two paths: the scan (scanRequest, with the
// parent and the children of a Prefetch's kinds decoded typed in the same
// pass) and the fallback (decodeRequestSlow, then every object decoded
// when a hook reads it). One request must get one answer whichever path
// reads it: these tests force each path and compare what a hook's reads
// give (status code and values).

// pathPrefetches are the hooks' Prefetches (hooks/myapp, hooks/database),
// by parent kind, built here: this package cannot import the hooks.
var pathPrefetches = map[string]*Prefetch{
	"MyApp": NewPrefetch[v1alpha1.MyApp](map[schema.GroupVersionKind]any{
		statefulSetKind: ObservedReads{Into: appsv1.StatefulSet{}, Paths: []string{
			"metadata.name", "metadata.namespace", "metadata.generation", "metadata.annotations",
			"spec.replicas", "spec.selector", "spec.template.metadata.annotations", "spec.template.spec",
			"spec.volumeClaimTemplates", "status",
		}},
	}),
	"Database": NewPrefetch[dbv1.Database](map[schema.GroupVersionKind]any{statefulSetKind: appsv1.StatefulSet{}}),
}

// pathAnswer is what a hook's reads of a request give: the status code the
// HTTP layer would answer with, and, read by read, each value or error.
type pathAnswer struct {
	Code  int
	Reads []string
}

// statusOf is the HTTP layer's status code for a hook's error.
func statusOf(err error) int {
	var requestErr *RequestError
	var invalidErr *InvalidError
	var costErr *CostError
	switch {
	case err == nil:
		return 200
	case errors.As(err, &costErr):
		return 413
	case errors.As(err, &requestErr):
		return 400
	case errors.As(err, &invalidErr):
		return 422
	}
	return 500
}

// readRequest reads a decoded request as the hooks do, and more: the
// parent as a kind (MyApp or Database), then every observed and related
// object of every kind typedFor knows, in sorted order. The first error
// is the answer's code.
func readRequest(t testing.TB, kind string, req *Request, err error) pathAnswer {
	if err != nil {
		return pathAnswer{Code: statusOf(err), Reads: []string{err.Error()}}
	}
	var answer pathAnswer
	read := func(what string, v any, err error) {
		if answer.Code == 0 && err != nil {
			answer.Code = statusOf(err)
		}
		if err != nil {
			answer.Reads = append(answer.Reads, what+": "+err.Error())
			return
		}
		answer.Reads = append(answer.Reads, what+": "+mustMarshalTB(t, v))
	}
	parent := typedFor(kind).(Parent)
	read("parent", parent, req.DecodeParent(parent, parentKinds[kind]))
	for _, section := range []struct {
		name     string
		children ChildMap
		observed func(schema.GroupVersionKind, string, string, any) (bool, error)
	}{{"children", req.Children, req.Observed}, {"related", req.Related, req.ObservedRelated}} {
		for _, typeKey := range slices.Sorted(maps.Keys(section.children)) {
			gvk, known := parseTypeKey(typeKey)
			if !known || typedFor(typeKey) == nil {
				continue
			}
			for _, key := range slices.Sorted(maps.Keys(section.children[typeKey])) {
				into := typedFor(typeKey)
				_, err := section.observed(gvk, "", key, into)
				read(fmt.Sprintf("%s[%q][%q]", section.name, typeKey, key), into, err)
			}
		}
	}
	if answer.Code == 0 {
		answer.Code = 200
	}
	return answer
}

var parentKinds = map[string]schema.GroupVersionKind{"MyApp": myAppKind, "Database": dbv1.GroupVersion.WithKind("Database")}

// parseTypeKey is TypeKey's inverse.
func parseTypeKey(typeKey string) (schema.GroupVersionKind, bool) {
	kind, groupVersion, ok := strings.Cut(typeKey, ".")
	if !ok {
		return schema.GroupVersionKind{}, false
	}
	gv, err := schema.ParseGroupVersion(groupVersion)
	return gv.WithKind(kind), err == nil
}

func mustMarshalTB(t testing.TB, v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// scanPath decodes body on the scan path alone; scanned false: the scan
// leaves it to the fallback.
func scanPath(body []byte, p *Prefetch) (req *Request, scanned bool, err error) {
	req, scanned, err = decodeRequestFast(body, p)
	return req, scanned, err
}

// fallbackPath decodes body on the fallback path alone.
func fallbackPath(body []byte, p *Prefetch) (*Request, error) {
	return decodeRequestSlow(body, p, nil)
}

// checkPathsAgree decodes body on each path and on DecodeRequestPrefetching's
// choice, and fails unless the three answers are one; it returns it, and
// whether the scan took the body.
func checkPathsAgree(t testing.TB, kind string, body []byte) (pathAnswer, bool) {
	t.Helper()
	p := pathPrefetches[kind]
	req, err := DecodeRequestPrefetching(body, p)
	chosen := readRequest(t, kind, req, err)
	slowReq, slowErr := fallbackPath(body, p)
	slow := readRequest(t, kind, slowReq, slowErr)
	if diff := cmp.Diff(slow, chosen); diff != "" {
		t.Errorf("%s %q: answer -fallback +DecodeRequestPrefetching:\n%s", kind, body, diff)
	}
	scanReq, scanned, scanErr := scanPath(body, p)
	if scanned {
		if diff := cmp.Diff(slow, readRequest(t, kind, scanReq, scanErr)); diff != "" {
			t.Errorf("%s %q: answer -fallback +scan:\n%s", kind, body, diff)
		}
	}
	// Without a Prefetch the scan reads only the request's own shape:
	// what it refuses, the fallback refuses.
	_, plainScanned, _ := scanPath(body, nil)
	_, plainErr := fallbackPath(body, nil)
	if !plainScanned && plainErr == nil {
		t.Errorf("%s %q: the scan refuses the request, the fallback takes it", kind, body)
	}
	return chosen, scanned
}

const pathsParent = `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","namespace":"n"},"spec":{"image":"x"}}`

// pathsBody is a request with pathsParent and children.
func pathsBody(children string) string {
	return `{"parent":` + pathsParent + `,"children":{` + children + `}}`
}

// costlyStatefulSet is a StatefulSet (named s) whose 6,000 empty
// containers cost 408 bytes each as the hook decodes them, more than the
// budget of a request this size.
var costlyStatefulSet = `{"s":{"metadata":{"name":"s"},"spec":{"template":{"spec":{"containers":[` + strings.Repeat(`{},`, 5999) + `{}]}}}}}`

// TestDecodePathsAgree: issue 30's differential fuzz findings, each forced
// on both paths; every case's answer is one code whichever path reads it.
func TestDecodePathsAgree(t *testing.T) {
	const sts = `"StatefulSet.apps/v1":`
	const widget = `"Widget.example.com/v1":` // a kind no hook reads
	cases := []struct {
		name, reason, body string
		want               int
	}{
		{"JSONWhiteSpace", "space, tab, CR and LF around the body are JSON's white space",
			" \t\r\n" + pathsBody("") + "\r\n\t ", 200},
		{"VerticalTab", "a vertical tab is not JSON white space (bytes.TrimSpace took it)",
			"\v" + pathsBody(""), 400},
		{"RepeatedEmptyTopKey", "the empty key given twice at the top is a repeated key as any other (its path, empty, read as none found: the fuzz found it)",
			`{"parent":` + pathsParent + `,"children":{},"":{},"":{}}`, 400},
		{"RepeatedEmptyChildKey", "the empty key given twice in a child, likewise",
			pathsBody(sts + `{"s":{"metadata":{"name":"s"},"":1,"":2}}`), 400},
		{"FormFeed", "a form feed is not JSON white space",
			pathsBody("") + "\f", 400},
		{"NoBreakSpace", "U+00A0 is not JSON white space",
			"\u00a0" + pathsBody(""), 400},
		{"NextLine", "U+0085 is not JSON white space",
			pathsBody("") + "\u0085", 400},
		{"ChildMetadataOtherCase", "a child's metadata is matched case-sensitively, as sigs.k8s.io/json does: Metadata is not metadata",
			pathsBody(widget + `{"w":{"Metadata":{"name":"w"}}}`), 400},
		{"ChildNameOtherCase", "a child's name is matched case-sensitively: NAME is not name",
			pathsBody(widget + `{"w":{"metadata":{"NAME":"w"}}}`), 400},
		{"ChildNameAndOtherCase", "Name beside name is another key, not a repeat",
			pathsBody(widget + `{"w":{"metadata":{"name":"w","Name":"v"}}}`), 200},
		{"ChildNameRepeated", "a key given twice in a child's metadata",
			pathsBody(widget + `{"w":{"metadata":{"name":"w","name":"v"}}}`), 400},
		{"ChildMemberRepeated", "a key given twice in a child's own members",
			pathsBody(widget + `{"w":{"metadata":{"name":"w"},"x":1,"x":2}}`), 400},
		{"RepeatedDeepInUnreadKind", "inside a child of a kind no hook reads, below its own members and metadata, only JSON is checked",
			pathsBody(widget + `{"w":{"metadata":{"name":"w"},"data":{"k":1,"k":2}}}`), 200},
		{"RequestMemberRepeated", "a key no hook knows, given twice in the request itself",
			`{"x":1,"x":2,"parent":` + pathsParent + `}`, 400},
		{"ControllerRepeated", "the controller is only checked to be JSON",
			`{"controller":{"x":1,"x":2},"parent":` + pathsParent + `}`, 200},
		{"RepeatedInUnreadMember", "a key given twice in a member of a read child that the hook does not read is refused, however the scan went",
			pathsBody(sts + `{"s":{"metadata":{"name":"s"},"spec":{"extra":{"a":1,"a":2}}}}`), 400},
		{"RepeatedUnknownInChild", "a key no decoder knows, given twice in a read child",
			pathsBody(sts + `{"s":{"metadata":{"name":"s"},"x":1,"x":2}}`), 400},
		{"RepeatedUnknownInParent", "a key no decoder knows, given twice in the parent",
			`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"},"x":1,"x":2}}`, 400},
		{"ParentNameRepeated", "a key given twice in the parent is a broken request (400), as README says, not a schema error (422)",
			`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","name":"b"}}}`, 400},
		{"ParentManagedFieldsRepeated", "managedFields is only checked to be JSON",
			`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","managedFields":[{"a":1,"a":2}]}}}`, 200},
		{"WrongTypeInUnreadMember", "a wrong type in a member of a read child the hook does not read is not refused",
			pathsBody(sts + `{"s":{"metadata":{"name":"s","labels":1}}}`), 200},
		{"WrongTypeInUnreadMemberAndFallback", "nor when something else in the request is refused first: the answer is that refusal's",
			pathsBody(sts + `{"s":{"metadata":{"name":"s","labels":1}}},` + widget + `{"w":{"Metadata":{"name":"w"}}}`), 400},
		{"WrongTypeInReadMember", "a wrong type in a member the hook reads is refused",
			pathsBody(sts + `{"s":{"metadata":{"name":"s"},"spec":{"replicas":"2"}}}`), 400},
		{"WrongTypeInParent", "a wrong type in the parent breaks its schema",
			`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"},"spec":{"replicaCount":"x"}}}`, 422},
		{"DeepUnknownMember", "2,000 nested arrays in a member no hook knows: JSON, within encoding/json's depth",
			`{"x":` + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + `,"parent":` + pathsParent + `}`, 200},
		{"TooDeep", "past encoding/json's 10,000 nested arrays and objects the body is refused on both paths",
			`{"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `,"parent":` + pathsParent + `}`, 400},
		{"CostThenMalformed", "a request past its budget is refused 413 at the place the budget ran out, before the malformed JSON after it (the slow path answered 400: issue 30)",
			pathsBody(sts+costlyStatefulSet) + `,`, 413},
		{"MalformedThenCost", "malformed JSON before the costly child is the answer: neither path reads past it",
			`{"parent":` + pathsParent + `,"x":[1,],"children":{` + sts + costlyStatefulSet + `}}`, 400},
		{"CostThenRepeatedKey", "a key given twice after the costly child does not turn 413 into 400",
			`{"parent":` + pathsParent + `,"children":{` + sts + costlyStatefulSet + `},"x":1,"x":2}`, 413},
		{"RepeatedKeyThenCost", "nor before it: the slow path takes the budget before it checks any name",
			`{"x":1,"x":2,"parent":` + pathsParent + `,"children":{` + sts + costlyStatefulSet + `}}`, 413},
		{"ChildWithoutNameThenCost", "nor a child without a name",
			pathsBody(widget + `{"w":{"Metadata":{}}},` + sts + costlyStatefulSet), 413},
		{"CostThenParentOfWrongType", "nor a parent, after the costly child, that breaks its schema (the slow path answered 422)",
			`{"children":{` + sts + costlyStatefulSet + `},"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"},"spec":{"replicaCount":"x"}}}`, 413},
		{"CostlyUnreadKind", "the same members in a kind no hook reads cost only their text",
			pathsBody(widget + strings.Replace(costlyStatefulSet, `"s"`, `"w"`, 1)), 200},
		{"TooDeepInParent", "and so in the parent",
			`{"parent":{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a"},"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := checkPathsAgree(t, "MyApp", []byte(tc.body))
			if got.Code != tc.want {
				t.Errorf("%s: answered %d, want %d: %v", tc.reason, got.Code, tc.want, got.Reads)
			}
		})
	}
}
