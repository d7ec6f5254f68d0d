package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

const lastAppliedKey = "metacontroller.k8s.io/last-applied-configuration"

// controller is the part of a CompositeController the test plays: the parent
// kind, its hook routes and the declared child kinds.
type controller struct {
	parent   schema.GroupVersionKind
	route    string // /hooks/<route>/sync and /finalize
	children []schema.GroupVersionKind
	// customize: the CompositeController has a customize hook,
	// /hooks/<route>/customize, whose rules fill the requests' related.
	customize bool
	// hookVersion v2 keys children and related objects "namespace/name";
	// v1 (also when empty) keys them by name.
	hookVersion string
	// serverSideApply plays --apply-strategy=server-side-apply instead of
	// the default dynamic apply (a three-way merge).
	serverSideApply bool
}

// objectKey is the key of a namespaced object in the request's maps.
func (c controller) objectKey(obj client.Object) string {
	if c.hookVersion == "v2" {
		return obj.GetNamespace() + "/" + obj.GetName()
	}
	return obj.GetName()
}

// mode names the hook version and apply strategy, for test names and figures.
func (c controller) mode() string {
	version, strategy := "v1", "three-way merge"
	if c.hookVersion != "" {
		version = c.hookVersion
	}
	if c.serverSideApply {
		strategy = "server-side apply"
	}
	return "hook " + version + ", " + strategy
}

// relatedRule is one rule of a customize answer.
type relatedRule struct {
	APIVersion    string                `json:"apiVersion"`
	Resource      string                `json:"resource"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector"`
	Namespace     string                `json:"namespace"`
	Names         []string              `json:"names"`
}

// customizeCache is Metacontroller's: customize answers per parent UID and
// generation.
var customizeCache = struct {
	sync.Mutex
	rules map[string][]relatedRule
}{rules: map[string][]relatedRule{}}

// writes counts what one sync made Metacontroller write.
type writes struct {
	created, updated, deleted []string
	status                    bool
}

func (w writes) none() bool {
	return len(w.created)+len(w.updated)+len(w.deleted) == 0 && !w.status
}

func (w writes) String() string {
	return fmt.Sprintf("created %v, updated %v, deleted %v, status written %v", w.created, w.updated, w.deleted, w.status)
}

// hookAnswer is the wire response, decoded with the API machinery's number
// rules so values compare with what the client reads back.
type hookAnswer struct {
	Status             map[string]any   `json:"status"`
	Children           []map[string]any `json:"children"`
	ResyncAfterSeconds float64          `json:"resyncAfterSeconds"`
	Finalized          bool             `json:"finalized"`
}

func (c controller) typeKey(gvk schema.GroupVersionKind) string {
	return gvk.Kind + "." + gvk.GroupVersion().String()
}

// get reads the parent back from the API server.
func (c controller) get(t *testing.T, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	parent := &unstructured.Unstructured{}
	parent.SetGroupVersionKind(c.parent)
	if err := k8s.Get(testContext(t), client.ObjectKey{Namespace: namespace, Name: name}, parent); err != nil {
		t.Fatalf("cannot read %s %s/%s: %v", c.parent.Kind, namespace, name, err)
	}
	return parent
}

// observed lists the children Metacontroller would claim: each declared kind
// in the parent's namespace labelled controller-uid=<parent uid>, keyed as
// the hook version says.
func (c controller) observed(t *testing.T, parent *unstructured.Unstructured) map[string]map[string]*unstructured.Unstructured {
	t.Helper()
	out := map[string]map[string]*unstructured.Unstructured{}
	for _, gvk := range c.children {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		if err := k8s.List(testContext(t), list, client.InNamespace(parent.GetNamespace()), client.MatchingLabels{"controller-uid": string(parent.GetUID())}); err != nil {
			t.Fatalf("cannot list %s: %v", gvk.Kind, err)
		}
		byKey := map[string]*unstructured.Unstructured{}
		for i := range list.Items {
			byKey[c.objectKey(&list.Items[i])] = &list.Items[i]
		}
		out[c.typeKey(gvk)] = byKey
	}
	return out
}

// controllerObject is the CompositeController sent in every request.
func (c controller) controllerObject() map[string]any {
	return map[string]any{"apiVersion": "metacontroller.k8s.io/v1alpha1", "kind": "CompositeController", "metadata": map[string]any{"name": c.route + "-controller"}}
}

// related plays Metacontroller's customize manager: the customize hook's
// rules for this parent (cached per UID and generation), then every object
// they select, keyed like children. Each rule's
// type key is there even when it selects nothing.
func (c controller) related(t *testing.T, parent *unstructured.Unstructured) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	if !c.customize {
		return out
	}
	for _, rule := range c.customizeRules(t, parent) {
		gv, err := schema.ParseGroupVersion(rule.APIVersion)
		if err != nil {
			t.Fatal(err)
		}
		gvk, err := k8s.RESTMapper().KindFor(gv.WithResource(rule.Resource))
		if err != nil {
			t.Fatalf("customize rule for unknown resource %s %s: %v", rule.APIVersion, rule.Resource, err)
		}
		typeKey := c.typeKey(gvk)
		if out[typeKey] == nil {
			out[typeKey] = map[string]any{}
		}
		namespace := rule.Namespace
		if namespace == "" {
			namespace = parent.GetNamespace()
		}
		if namespace != parent.GetNamespace() {
			t.Fatalf("customize rule in namespace %s for a parent in %s: hook version v1 refuses it", namespace, parent.GetNamespace())
		}
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
		opts := []client.ListOption{client.InNamespace(namespace)}
		if rule.LabelSelector != nil {
			selector, err := metav1.LabelSelectorAsSelector(rule.LabelSelector)
			if err != nil {
				t.Fatal(err)
			}
			opts = append(opts, client.MatchingLabelsSelector{Selector: selector})
		}
		if err := k8s.List(testContext(t), list, opts...); err != nil {
			t.Fatalf("cannot list related %s: %v", gvk.Kind, err)
		}
		for i := range list.Items {
			if len(rule.Names) == 0 || slices.Contains(rule.Names, list.Items[i].GetName()) {
				out[typeKey][c.objectKey(&list.Items[i])] = list.Items[i].Object
			}
		}
	}
	return out
}

// customizeRules calls the customize hook unless its answer for this parent
// UID and generation is cached.
func (c controller) customizeRules(t *testing.T, parent *unstructured.Unstructured) []relatedRule {
	t.Helper()
	key := fmt.Sprintf("%s/%d", parent.GetUID(), parent.GetGeneration())
	customizeCache.Lock()
	defer customizeCache.Unlock()
	if rules, ok := customizeCache.rules[key]; ok {
		return rules
	}
	body, err := json.Marshal(map[string]any{"controller": c.controllerObject(), "parent": parent.Object})
	if err != nil {
		t.Fatal(err)
	}
	code, answer, _ := postHook(t, "/hooks/"+c.route+"/customize", body)
	if code != 200 {
		t.Fatalf("customize hook for %s/%s = %d: %s", parent.GetNamespace(), parent.GetName(), code, answer)
	}
	var response struct {
		RelatedResources []relatedRule `json:"relatedResources"`
	}
	if err := utiljson.Unmarshal(answer, &response); err != nil {
		t.Fatalf("cannot decode the customize answer: %v: %s", err, answer)
	}
	customizeCache.rules[key] = response.RelatedResources
	return response.RelatedResources
}

// request builds the body Metacontroller posts for the parent as stored now.
func (c controller) request(t *testing.T, parent *unstructured.Unstructured, observed map[string]map[string]*unstructured.Unstructured, finalizing bool) []byte {
	t.Helper()
	children := map[string]map[string]any{}
	for typeKey, objects := range observed {
		children[typeKey] = map[string]any{}
		for key, obj := range objects {
			children[typeKey][key] = obj.Object
		}
	}
	body, err := json.Marshal(map[string]any{
		"controller": c.controllerObject(),
		"parent":     parent.Object,
		"children":   children,
		"related":    c.related(t, parent),
		"finalizing": finalizing,
	})
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// call posts the parent's current state to the sync (or finalize) hook and
// decodes a 200 answer.
func (c controller) call(t *testing.T, namespace, name string, finalizing bool) (*unstructured.Unstructured, map[string]map[string]*unstructured.Unstructured, hookAnswer) {
	t.Helper()
	parent := c.get(t, namespace, name)
	observed := c.observed(t, parent)
	hook := "sync"
	if finalizing {
		hook = "finalize"
	}
	code, body := c.callCached(t, hook, namespace+"/"+name, c.request(t, parent, observed, finalizing))
	if code != 200 {
		t.Fatalf("%s hook for %s/%s = %d: %s", hook, namespace, name, code, body)
	}
	var answer hookAnswer
	if err := utiljson.Unmarshal(body, &answer); err != nil {
		t.Fatalf("cannot decode the %s answer: %v: %s", hook, err, body)
	}
	if finalizing == false && answer.Finalized {
		t.Fatalf("sync answer says finalized: %s", body)
	}
	return parent, observed, answer
}

// etagCache is Metacontroller's ETag cache, one entry per controller, hook
// and parent (contract §4.5): webhook.etag is enabled for sync and finalize
// in deploy/compositecontroller.yaml, so the test's Metacontroller has it too.
var etagCache = struct {
	sync.Mutex
	entries map[string]cachedAnswer
	hits    map[string]int // 412s answered, by parent "namespace/name"
}{entries: map[string]cachedAnswer{}, hits: map[string]int{}}

// cachedAnswer is the ETag of a 200 and the answer it came with.
type cachedAnswer struct {
	etag   string
	answer []byte
}

// callCached calls a sync or finalize hook as Metacontroller does with ETags
// enabled: with If-None-Match when it holds an ETag for the parent, reusing
// the cached answer on a 412, keeping a 200's ETag and answer, and leaving
// the entry as it was after a 200 without one.
func (c controller) callCached(t *testing.T, hook, parentKey string, body []byte) (int, []byte) {
	t.Helper()
	key := c.mode() + " " + c.route + " " + hook + " " + parentKey
	etagCache.Lock()
	cached, held := etagCache.entries[key]
	etagCache.Unlock()
	var header []string
	if held {
		header = []string{"If-None-Match", cached.etag}
	}
	code, answer, etag := postHook(t, "/hooks/"+c.route+"/"+hook, body, header...)
	etagCache.Lock()
	defer etagCache.Unlock()
	switch {
	case code == http.StatusPreconditionFailed && held:
		etagCache.hits[parentKey]++
		return http.StatusOK, cached.answer
	case code == http.StatusOK && etag != "":
		etagCache.entries[key] = cachedAnswer{etag: etag, answer: answer}
	}
	return code, answer
}

// etagHits is how many calls for the parent were answered 412 so far.
func etagHits(parentKey string) int {
	etagCache.Lock()
	defer etagCache.Unlock()
	return etagCache.hits[parentKey]
}

// sync is one Metacontroller sync: call the hook, then create, update and
// delete children as the default dynamic apply (or server-side apply) does,
// and write the status. It returns what was written.
func (c controller) sync(t *testing.T, namespace, name string, finalizing bool) (hookAnswer, writes) {
	t.Helper()
	parent, observed, answer := c.call(t, namespace, name, finalizing)
	var w writes
	if answer.Finalized {
		// Metacontroller v4.17 removes its finalizer before it manages
		// children, and manages none once it is gone: garbage collection
		// deletes them through their owner references.
		parent.SetFinalizers(nil)
		if err := k8s.Update(testContext(t), parent); err != nil && !apierrors.IsNotFound(err) {
			t.Fatalf("cannot remove the finalizer: %v", err)
		}
		return answer, w
	}
	desiredKeys := map[string]bool{}
	for _, desired := range answer.Children {
		child := &unstructured.Unstructured{Object: desired}
		if child.GetNamespace() == "" {
			child.SetNamespace(parent.GetNamespace())
		}
		labels := child.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels["controller-uid"] = string(parent.GetUID()) // generateSelector: true
		child.SetLabels(labels)
		typeKey := child.GetKind() + "." + child.GetAPIVersion()
		id := typeKey + " " + child.GetName()
		desiredKeys[typeKey+" "+c.objectKey(child)] = true
		lastApplied, err := json.Marshal(child.Object)
		if err != nil {
			t.Fatal(err)
		}
		current, exists := observed[typeKey][c.objectKey(child)]
		if _, declared := observed[typeKey]; !declared {
			t.Fatalf("the hook answered a %s, a kind the CompositeController does not declare", typeKey)
		}
		if c.serverSideApply {
			if exists && current.GetDeletionTimestamp() != nil {
				continue // children pending deletion are never updated
			}
			if changed := applyServerSide(t, parent, child, current); changed && exists {
				w.updated = append(w.updated, id)
			} else if changed {
				w.created = append(w.created, id)
			}
			continue
		}
		if !exists {
			annotations := child.GetAnnotations()
			if annotations == nil {
				annotations = map[string]string{}
			}
			annotations[lastAppliedKey] = string(lastApplied)
			child.SetAnnotations(annotations)
			child.SetOwnerReferences([]metav1.OwnerReference{{
				APIVersion: parent.GetAPIVersion(), Kind: parent.GetKind(), Name: parent.GetName(), UID: parent.GetUID(),
				Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true),
			}})
			if err := k8s.Create(testContext(t), child); err != nil {
				t.Fatalf("the API server rejected %s: %v\n%s", id, err, lastApplied)
			}
			w.created = append(w.created, id)
			continue
		}
		merged := applyUpdate(t, current.Object, child.Object, string(lastApplied))
		if reflect.DeepEqual(merged, current.Object) {
			continue
		}
		updated := &unstructured.Unstructured{Object: merged}
		if err := k8s.Update(testContext(t), updated); err != nil {
			t.Fatalf("the API server rejected the update of %s: %v", id, err)
		}
		w.updated = append(w.updated, id+diffPaths(current.Object, merged))
	}
	for typeKey, objects := range observed {
		for key, obj := range objects {
			if !desiredKeys[typeKey+" "+key] && obj.GetDeletionTimestamp() == nil {
				if err := k8s.Delete(testContext(t), obj); err != nil && !apierrors.IsNotFound(err) {
					t.Fatalf("cannot delete %s %s: %v", typeKey, key, err)
				}
				w.deleted = append(w.deleted, typeKey+" "+obj.GetName())
			}
		}
	}
	w.status = c.writeStatus(t, parent, answer.Status)
	sort.Strings(w.created)
	sort.Strings(w.updated)
	return answer, w
}

// applyServerSide is Metacontroller's server-side apply of one child: the
// desired object with the controller's owner reference, applied with force
// under the field manager "metacontroller". It reports whether the apply
// changed the stored object (created it, or a new resourceVersion).
func applyServerSide(t *testing.T, parent, child, current *unstructured.Unstructured) bool {
	t.Helper()
	child.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: parent.GetAPIVersion(), Kind: parent.GetKind(), Name: parent.GetName(), UID: parent.GetUID(),
		Controller: ptrTo(true), BlockOwnerDeletion: ptrTo(true),
	}})
	if err := k8s.Patch(testContext(t), child, client.Apply, client.ForceOwnership, client.FieldOwner("metacontroller")); err != nil {
		raw, _ := json.Marshal(child.Object)
		t.Fatalf("the API server rejected the server-side apply of %s %s: %v\n%s", child.GetKind(), child.GetName(), err, raw)
	}
	return current == nil || current.GetResourceVersion() != child.GetResourceVersion()
}

// writeStatus stores the answer's status the way Metacontroller does: with
// observedGeneration set to the generation the hook saw, only when it differs
// from the stored one, through the status subresource. It then reads the
// status back: a field the CRD does not declare would have been pruned.
func (c controller) writeStatus(t *testing.T, parent *unstructured.Unstructured, status map[string]any) bool {
	t.Helper()
	if status == nil {
		status = map[string]any{}
	}
	status["observedGeneration"] = parent.GetGeneration()
	fresh := c.get(t, parent.GetNamespace(), parent.GetName())
	stored, _, _ := unstructured.NestedMap(fresh.Object, "status")
	if reflect.DeepEqual(normalize(t, stored), normalize(t, status)) {
		return false
	}
	fresh.Object["status"] = status
	if err := k8s.Status().Update(testContext(t), fresh); err != nil {
		t.Fatalf("the API server rejected the status of %s/%s: %v", parent.GetNamespace(), parent.GetName(), err)
	}
	readBack := c.get(t, parent.GetNamespace(), parent.GetName())
	got, _, _ := unstructured.NestedMap(readBack.Object, "status")
	if !reflect.DeepEqual(normalize(t, got), normalize(t, status)) {
		t.Fatalf("the API server changed (pruned?) the status:\nwrote %v\nread  %v", status, got)
	}
	return true
}

// applyUpdate is Metacontroller's dynamic apply of one child: a three-way
// merge of desired into observed against the last applied configuration
// (fields dropped since the last apply are removed; lists whose items all
// share a conventional key - containerPort, port, mountPath, name, uid, ip,
// path - merge item by item, other lists are replaced), then system metadata
// and status are put back as observed and the annotation records desired.
func applyUpdate(t *testing.T, observed, desired map[string]any, desiredJSON string) map[string]any {
	t.Helper()
	var lastApplied map[string]any
	if raw := nestedString(observed, "metadata", "annotations", lastAppliedKey); raw != "" {
		if err := utiljson.Unmarshal([]byte(raw), &lastApplied); err != nil {
			t.Fatalf("bad last-applied annotation: %v", err)
		}
	}
	var desiredCopy map[string]any
	if err := utiljson.Unmarshal([]byte(desiredJSON), &desiredCopy); err != nil {
		t.Fatal(err)
	}
	merged := mergeValue(deepCopy(t, observed), lastApplied, desiredCopy).(map[string]any)
	metadata := merged["metadata"].(map[string]any)
	observedMetadata := observed["metadata"].(map[string]any)
	for _, key := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "managedFields"} {
		if v, ok := observedMetadata[key]; ok {
			metadata[key] = v
		} else {
			delete(metadata, key)
		}
	}
	if status, ok := observed["status"]; ok {
		merged["status"] = status
	} else {
		delete(merged, "status")
	}
	annotations, _ := metadata["annotations"].(map[string]any)
	if annotations == nil {
		annotations = map[string]any{}
	}
	annotations[lastAppliedKey] = desiredJSON
	metadata["annotations"] = annotations
	return merged
}

func mergeValue(destination, lastApplied, desired any) any {
	switch dest := destination.(type) {
	case map[string]any:
		last, _ := lastApplied.(map[string]any)
		want, ok := desired.(map[string]any)
		if !ok {
			return desired
		}
		return mergeMap(dest, last, want)
	case []any:
		last, _ := lastApplied.([]any)
		want, ok := desired.([]any)
		if !ok {
			return desired
		}
		if key := listMapKey(dest, last, want); key != "" {
			return mergeListMap(key, dest, last, want)
		}
		return desired
	default:
		return desired
	}
}

func mergeMap(dest, last, want map[string]any) map[string]any {
	for key := range last {
		if _, kept := want[key]; !kept {
			delete(dest, key)
		}
	}
	for key, value := range want {
		dest[key] = mergeValue(dest[key], last[key], value)
	}
	return dest
}

func mergeListMap(key string, dest, last, want []any) []any {
	byKey := func(list []any) map[string]any {
		m := map[string]any{}
		for _, item := range list {
			m[fmt.Sprint(item.(map[string]any)[key])] = item
		}
		return m
	}
	destMap := mergeMap(byKey(dest), byKey(last), byKey(want))
	out := []any{}
	seen := map[string]bool{}
	for _, list := range [][]any{dest, want} {
		for _, item := range list {
			k := fmt.Sprint(item.(map[string]any)[key])
			if v, ok := destMap[k]; ok && !seen[k] {
				out = append(out, v)
				seen[k] = true
			}
		}
	}
	return out
}

// listMapKey returns the conventional key every item of every list has, or "".
func listMapKey(lists ...[]any) string {
	var common map[string]bool
	for _, list := range lists {
		for _, item := range list {
			obj, ok := item.(map[string]any)
			if !ok {
				return ""
			}
			if common == nil {
				common = map[string]bool{}
				for k := range obj {
					common[k] = true
				}
				continue
			}
			for k := range common {
				if _, ok := obj[k]; !ok {
					delete(common, k)
				}
			}
		}
	}
	for _, key := range []string{"containerPort", "port", "mountPath", "name", "uid", "ip", "path"} {
		if common[key] {
			return key
		}
	}
	return ""
}

// diffPaths names the top-level fields that differ, for failure messages.
func diffPaths(a, b map[string]any) string {
	out := ""
	for _, section := range []string{"spec", "data", "stringData"} {
		if !reflect.DeepEqual(a[section], b[section]) {
			sa, _ := json.Marshal(a[section])
			sb, _ := json.Marshal(b[section])
			out += fmt.Sprintf("\n  %s observed: %s\n  %s merged:   %s", section, sa, section, sb)
		}
	}
	return out
}

func nestedString(obj map[string]any, path ...string) string {
	s, _, _ := unstructured.NestedString(obj, path...)
	return s
}

func deepCopy(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	return normalize(t, v)
}

// normalize round-trips through JSON with the API machinery's number rules.
func normalize(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := utiljson.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }
