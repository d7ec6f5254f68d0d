package composite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "sigs.k8s.io/json"
)

// Request is Metacontroller's CompositeHookRequest, the body of every sync and
// finalize call. Parent and children stay raw JSON until a hook decodes them into
// its own typed objects.
type Request struct {
	// Controller is the CompositeController that made the call.
	Controller json.RawMessage `json:"controller,omitempty"`
	// Parent is the parent object as Metacontroller's cache holds it.
	Parent json.RawMessage `json:"parent"`
	// Children are the observed children, by type key and object key.
	Children ChildMap `json:"children"`
	// Related are the objects the customize hook selected (read-only).
	Related ChildMap `json:"related,omitempty"`
	// Finalizing is true only on finalize calls.
	Finalizing bool `json:"finalizing"`

	// prefetched are the parent and children DecodeRequestPrefetching
	// decoded while it scanned the body.
	prefetched prefetched
	// reads is the Prefetch the request was decoded with: a child of one
	// of its kinds is cut as it says whichever path read the body, so
	// that what is left unread is left unread on both.
	reads *Prefetch
	// prepaid are the objects the slow path charged before it decoded
	// the body, as the scan charges them (prepay), each with what its
	// first read pays.
	prepaid map[*byte]payment
	// declined are the objects the scan's typed decoder declined.
	declined map[*byte]struct{}
	// budget is what the objects decoded from the body may still take
	// (decodecost.go); nil in a Request not made by DecodeRequest: each
	// object then has a budget of its own size.
	budget *costBudget
}

// ChildMap maps a type key ("ConfigMap.v1", "StatefulSet.apps/v1") to the objects
// of that type, keyed by "name" (hook version v1) or "namespace/name" (v2).
type ChildMap map[string]map[string]json.RawMessage

// TypeKey returns Metacontroller's key for a child type: "Kind.version" for the
// core group and "Kind.group/version" otherwise.
func TypeKey(gvk schema.GroupVersionKind) string {
	return string(appendTypeKey(nil, gvk))
}

// appendTypeKey appends TypeKey(gvk) to dst: a map lookup with
// string(appendTypeKey(buf[:0], gvk)) as its key allocates nothing.
func appendTypeKey(dst []byte, gvk schema.GroupVersionKind) []byte {
	dst = append(append(dst, gvk.Kind...), '.')
	if gvk.Group != "" {
		dst = append(append(dst, gvk.Group...), '/')
	}
	return append(dst, gvk.Version...)
}

// typeKeyBuffer holds a type key on the stack: long enough for any
// Kubernetes kind and group.
type typeKeyBuffer [128]byte

// DecodeRequest parses a hook request body. It fails with *RequestError when the
// body is not JSON, is not an object, or has a field of the wrong shape.
func DecodeRequest(body []byte) (*Request, error) {
	return DecodeRequestPrefetching(body, nil)
}

// DecodeRequestPrefetching is DecodeRequest that also decodes what p names
// while it reads the body (see Prefetch). The Request it returns, and every
// error, are DecodeRequest's.
//
// A body is read on one of two paths, which give one answer: the scan
// (decodeRequestFast), and, for what the scan leaves, the fallback
// (decodeRequestSlow), which gives the precise error. The scan refuses
// nothing the fallback takes (FuzzDecodePaths holds them to each other).
func DecodeRequestPrefetching(body []byte, p *Prefetch) (*Request, error) {
	req, scanned, err := decodeRequestFast(body, p)
	if scanned {
		return req, err
	}
	return decodeRequestSlow(body, p, req)
}

// decodeRequestFast is the scan path of DecodeRequestPrefetching; scanned
// false: the scan leaves the body to decodeRequestSlow, with what it read
// before it gave up (req).
func decodeRequestFast(body []byte, p *Prefetch) (req *Request, scanned bool, err error) {
	trimmed, err := checkBody(body)
	if err != nil {
		return nil, true, err
	}
	budget := newCostBudget(trimmed)
	req, ok := scanRequest(trimmed, p, budget)
	if !ok && budget.placed {
		return nil, true, budget.refused // the slow path refuses it there too (chargeRequest)
	}
	if !ok {
		return req, false, nil
	}
	if err := checkParent(req.Parent); err != nil {
		return nil, true, err
	}
	req.reads = p
	return req, true, nil
}

// decodeRequestSlow is DecodeRequest without the scan: the budget taken
// as the scan takes it (chargeRequest), sigs.k8s.io/json's reading of the
// whole body, every name checked where the scan checks names
// (repeatedRequestName), then every observed and related child checked to
// be an object with a name, for the precise error. What scanned (nil: no
// scan) decoded before it gave up is handed on, not decoded again.
func decodeRequestSlow(body []byte, p *Prefetch, scanned *Request) (*Request, error) {
	trimmed, err := checkBody(body)
	if err != nil {
		return nil, err
	}
	budget := newCostBudget(trimmed)
	if err := chargeRequest(trimmed, p, budget); err != nil {
		return nil, err
	}
	// Objects stay sub-slices of the body, as the scan keeps them: the
	// budget has no share for a copy.
	var slow slowPathRequest
	if err := decodeSlow(trimmed, &slow); err != nil {
		return nil, requestDecodeError(err)
	}
	req := &Request{
		Controller: json.RawMessage(slow.Controller),
		Parent:     json.RawMessage(slow.Parent),
		Children:   slow.Children.childMap(),
		Related:    slow.Related.childMap(),
		Finalizing: slow.Finalizing,
		budget:     budget,
		reads:      p,
	}
	if err := checkParent(req.Parent); err != nil {
		return nil, err
	}
	if field := repeatedRequestName(trimmed); field != "" {
		return nil, &RequestError{Field: field, Reason: duplicateKey}
	}
	if err := checkChildren("children", req.Children); err != nil {
		return nil, err
	}
	if err := checkChildren("related", req.Related); err != nil {
		return nil, err
	}
	req.prepay(p, scanned)
	return req, nil
}

// slowPathRequest is Request as the slow path decodes it: each object a
// sub-slice of the body (bodySlice), not a copy.
type slowPathRequest struct {
	Controller bodySlice    `json:"controller,omitempty"`
	Parent     bodySlice    `json:"parent"`
	Children   slowChildMap `json:"children"`
	Related    slowChildMap `json:"related,omitempty"`
	Finalizing bool         `json:"finalizing"`
}

// bodySlice is a json.RawMessage that keeps the decoder's own slice of
// the input instead of copying it: encoding/json (and sigs.k8s.io/json,
// its fork) hands UnmarshalJSON a sub-slice of the bytes given to
// Unmarshal, which here is the request body, kept until the answer.
type bodySlice []byte

func (b *bodySlice) UnmarshalJSON(data []byte) error {
	*b = data[:len(data):len(data)]
	return nil
}

type slowChildMap map[string]map[string]bodySlice

// childMap is m as a ChildMap; childCost, taken for each object, covers
// the second map entry.
func (m slowChildMap) childMap() ChildMap {
	if m == nil {
		return nil
	}
	out := make(ChildMap, len(m))
	for typeKey, objects := range m {
		if objects == nil {
			out[typeKey] = nil
			continue
		}
		o := make(map[string]json.RawMessage, len(objects))
		for name, raw := range objects {
			o[name] = json.RawMessage(raw)
		}
		out[typeKey] = o
	}
	return out
}

// prepay notes, for the slow path, the objects whose cost chargeRequest
// took as their Prefetch types (the parent and the observed children of
// p's kinds): a hook's first read of one charges only what the slow
// decoder adds, as a read of what the scan decoded charges nothing. What
// scanned decoded (the same bytes of the body) is handed on as the scan's
// own Request hands it.
func (r *Request) prepay(p *Prefetch, scanned *Request) {
	if p == nil {
		return
	}
	r.prepaid = map[*byte]payment{}
	pay := func(raw []byte) {
		if len(raw) == 0 || raw[0] != '{' {
			return
		}
		r.prepaid[&raw[0]] = prepaid
		if scanned != nil {
			if _, ok := scanned.declined[&raw[0]]; ok {
				r.prepaid[&raw[0]] = prepaidDeclined
			}
		}
	}
	if p.parent.t != nil {
		pay(r.Parent)
	}
	for typeKey, objects := range r.Children {
		if p.childKind(typeKey).t == nil {
			continue
		}
		for _, raw := range objects {
			pay(raw)
		}
	}
	if scanned == nil {
		return
	}
	handOn := func(raw, scannedRaw []byte) {
		if len(raw) == 0 || len(scannedRaw) == 0 || &raw[0] != &scannedRaw[0] {
			return // not the object the scan read (a key given twice, which is refused)
		}
		if v, ok := scanned.prefetched[&raw[0]]; ok {
			if r.prefetched == nil {
				r.prefetched = prefetched{}
			}
			r.prefetched[&raw[0]] = v
			delete(r.prepaid, &raw[0])
		}
	}
	handOn(r.Parent, scanned.Parent)
	for typeKey, objects := range scanned.Children {
		for name, scannedRaw := range objects {
			handOn(r.Children[typeKey][name], scannedRaw)
		}
	}
}

// payment is what a read of an object still has to take from the budget.
type payment uint8

const (
	unpaid          payment = iota // the whole cost
	prepaid                        // only the slow decoder's, if the typed one declines
	prepaidDeclined                // the slow decoder's: the scan's typed decoder declined it
)

// takePrepaid is what the first read of raw pays: an object chargeRequest
// charged and no read has taken yet is taken.
func (r *Request) takePrepaid(raw []byte) payment {
	if len(raw) == 0 {
		return unpaid
	}
	pay, ok := r.prepaid[&raw[0]]
	if !ok {
		return unpaid
	}
	delete(r.prepaid, &raw[0])
	return pay
}

// checkChildren fails with *RequestError, naming the first bad child in
// sorted order, unless every object is a JSON object with metadata.name:
// Metacontroller always sends the whole object, so a null, an array or an
// object without a name is a broken request, whether or not the hook reads
// that kind (a child read as present with every field empty would change
// the answer).
func checkChildren(section string, m ChildMap) error {
	for _, typeKey := range slices.Sorted(maps.Keys(m)) {
		objects := m[typeKey]
		for _, key := range slices.Sorted(maps.Keys(objects)) {
			field := ChildPath(section, typeKey, key)
			trimmed := trimJSONSpace(objects[key])
			if len(trimmed) == 0 || trimmed[0] != '{' {
				return &RequestError{Field: field, Reason: "must be an object (the observed child), got " + jsonKind(trimmed)}
			}
			var meta struct {
				Metadata struct {
					Name any `json:"name"`
				} `json:"metadata"`
			}
			// Case-sensitive, as the scan and the API server read names:
			// "Metadata" and "NAME" are other members.
			if err := kjson.UnmarshalCaseSensitivePreserveInts(trimmed, &meta); err != nil {
				return &RequestError{Field: field + ".metadata", Reason: "must be an object (the observed child's metadata)"}
			}
			if name, ok := meta.Metadata.Name.(string); !ok || name == "" {
				return &RequestError{Field: field + ".metadata.name", Reason: "required: an observed child always has its metadata"}
			}
		}
	}
	return nil
}

// checkParent fails with *RequestError unless parent is a JSON object.
func checkParent(parent json.RawMessage) error {
	trimmed := trimJSONSpace(parent)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return &RequestError{Field: "parent", Reason: "required"}
	}
	if trimmed[0] != '{' {
		return &RequestError{Field: "parent", Reason: "must be an object"}
	}
	return nil
}

// checkBody fails with *RequestError unless body is a JSON object, and
// returns it without the white space around it.
func checkBody(body []byte) ([]byte, error) {
	trimmed := trimJSONSpace(body)
	if len(trimmed) == 0 {
		return nil, &RequestError{Field: "body", Reason: "empty; want a Metacontroller hook request object"}
	}
	if trimmed[0] != '{' {
		return nil, &RequestError{Field: "body", Reason: "not a JSON object; want a Metacontroller hook request object"}
	}
	return trimmed, nil
}

func requestDecodeError(err error) error {
	var decodeErr *DecodeError
	if errors.As(err, &decodeErr) && decodeErr.Field != "" {
		return &RequestError{Field: decodeErr.Field, Reason: decodeErr.Reason}
	}
	return &RequestError{Field: "body", Reason: err.Error()}
}

// DecodeError is a value of the wrong type, or a key given twice,
// somewhere inside a decoded object.
type DecodeError struct {
	Field  string // JSON path, e.g. "spec.replicaCount"; "" when unknown
	Reason string
	// repeated: a key given twice, which makes the request malformed
	// (400) even in the parent, not the parent's schema broken (422).
	repeated bool
}

// duplicateKey is the reason for a key given twice in an object.
const duplicateKey = "duplicate key: a key may appear only once in an object"

func (e *DecodeError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

// DecodeObject decodes one Kubernetes object (the parent or a child) into a
// typed value with the API server's rules: keys are case-sensitive, unknown
// fields are ignored, and a key given twice in one object is refused, a
// known one or not (the API server's strict decoding; otherwise the last
// one would silently win). A value of the wrong type, a malformed quantity
// or a duplicate key comes back as a *DecodeError naming its JSON path.
// What no hook reads (metadata.managedFields, the last applied
// configuration annotation) is left out, only checked to be JSON
// (prune.go).
func DecodeObject(raw []byte, into any) error {
	return decodeTree(raw, into, pruneTreeOf(reflect.TypeOf(into).Elem(), false), nil, unpaid)
}

// decodeObserved is DecodeObject for an observed or related object: only
// what hooks read of it is built (prune.go), and what that fast path
// refuses gets the slow decoder's error.
func decodeObserved(raw []byte, into any) error {
	return decodeTree(raw, into, pruneTreeOf(reflect.TypeOf(into).Elem(), true), nil, unpaid)
}

// decodeTree decodes raw into into, leaving out what tree leaves out: the
// typed decoder, or, where it refuses, the slow decoder, which gives the
// precise error. The two refuse the same: the slow decoder does not look
// for a key no decoder knows given twice, and repeatedObjectName does, in
// what the typed decoder checks names in. Before each decoder, the cost of
// what it builds (the typed one leaves out what tree does, the slow one
// nothing) is taken from budget (nil: one of raw's own size), or it fails
// with *CostError before anything is built.
//
// paid: what chargeRequest took before; prepaid, only the slow decoder's
// cost is taken here; prepaidDeclined, the typed decoder is not tried
// again (the scan's declined it).
func decodeTree(raw []byte, into any, tree *pruneNode, budget *costBudget, paid payment) error {
	t := reflect.TypeOf(into).Elem()
	if budget == nil {
		budget = newCostBudget(raw)
	}
	if paid != prepaidDeclined {
		s := newScanner(raw)
		walk := budget // the walk also notes the counts and skips the decoder reads
		if paid == prepaid {
			walk = &costBudget{left: math.MaxInt64 / 2, limit: budget.limit, body: budget.body}
		}
		err := walk.chargeAt(s, s.ws(0), t, tree)
		decoded := err == nil && s.decodeWhole(into, tree)
		s.release()
		if err != nil || decoded {
			return err
		}
	}
	// What the typed decoder built before it declined stays charged; the
	// slow decoder leaves nothing out and grows its slices.
	took, err := budget.charge(raw, t, nil)
	if err != nil {
		return err
	}
	if err := budget.takeSlow(); err != nil {
		return err
	}
	if err := decodeSlowWithin(raw, into, budget, took); err != nil {
		return err
	}
	if field, found := repeatedObjectName(raw, tree); found {
		return &DecodeError{Field: field, Reason: duplicateKey, repeated: true}
	}
	return nil
}

// decodeSlow is DecodeObject with sigs.k8s.io/json, the API server's decoder:
// what decodeFast refuses comes here, for the precise error.
func decodeSlow(raw []byte, into any) error { return decodeSlowWithin(raw, into, nil, 0) }

// decodeSlowWithin is decodeSlow drawing on budget (nil: none); took is
// what the last walk, of raw, charged it: the error path's second decode
// takes it again.
func decodeSlowWithin(raw []byte, into any, budget *costBudget, took int64) error {
	// First, before the decoder or the error paths below parse a quantity:
	// an exponent like 1e-99999999 costs resource.ParseQuantity minutes.
	if field, reason, found := unboundedQuantityPath(raw, reflect.TypeOf(into)); found {
		return &DecodeError{Field: field, Reason: reason}
	}
	strict, err := kjson.UnmarshalStrict(raw, into, kjson.DisallowDuplicateFields)
	if err == nil {
		if len(strict) > 0 {
			return duplicateFieldError(strict[0])
		}
		return nil
	}
	if isSyntax, offset := kjson.SyntaxErrorOffset(err); isSyntax {
		return &DecodeError{Reason: fmt.Sprintf("malformed JSON at byte %d", offset)}
	}
	if strings.HasPrefix(err.Error(), resource.ErrFormatWrong.Error()) {
		return &DecodeError{Field: quantityErrorPath(raw, reflect.TypeOf(into)), Reason: malformedQuantity}
	}
	// typeErrorPath decodes the object once more, with encoding/json.
	if budget != nil && !budget.take(took+budget.grown) {
		return &CostError{Limit: budget.limit, Body: budget.body}
	}
	return &DecodeError{Field: typeErrorPath(raw, into), Reason: typeErrorReason(err)}
}

// malformedQuantity is the reason for a quantity that does not parse.
const malformedQuantity = "malformed quantity: want a number with an optional suffix, such as 1Gi, 500M, 250m or 2"

// duplicateFieldError turns the strict decoder's `duplicate field "spec.port"`
// into a *DecodeError naming the path.
func duplicateFieldError(err error) error {
	message := err.Error()
	if quoted, ok := strings.CutPrefix(message, "duplicate field "); ok {
		if path, err := strconv.Unquote(quoted); err == nil {
			return &DecodeError{Field: path, Reason: duplicateKey, repeated: true}
		}
	}
	return &DecodeError{Reason: message, repeated: true}
}

// typeErrorPath finds the path of a type error. The case-sensitive decoder
// keeps its error type internal, so the path comes from encoding/json decoding
// the same bytes into a fresh value of the same type; this runs only on the
// error path.
func typeErrorPath(raw []byte, into any) string {
	fresh := reflect.New(reflect.TypeOf(into).Elem()).Interface()
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(raw, fresh); errors.As(err, &typeErr) {
		return typeErr.Field
	}
	return ""
}

// typeErrorReason turns "json: cannot unmarshal string into Go struct field
// MyApp.spec.replicaCount of type int32" into "wrong type: got a JSON string,
// want int32"; other errors (a malformed quantity) pass through.
func typeErrorReason(err error) string {
	message := err.Error()
	const prefix = "json: cannot unmarshal "
	if !strings.HasPrefix(message, prefix) {
		return message
	}
	rest := strings.TrimPrefix(message, prefix)
	value, _, _ := strings.Cut(rest, " into ")
	_, goType, found := strings.Cut(rest, " of type ")
	if !found {
		return message
	}
	return fmt.Sprintf("wrong type: got a JSON %s, want %s", value, goType)
}

// Observed returns the observed child of the given type and name in the
// parent's namespace, decoded into into. It accepts both the v1 key ("name") and
// the v2 key ("namespace/name"). It reports false when no such child was
// observed, and a *RequestError when the child does not decode.
//
// Only what hooks read is decoded: metadata.managedFields is left empty, the
// annotations hold no last applied configuration (Metacontroller's or
// kubectl's), and every pod spec in the child (a StatefulSet's template, a
// CronJob's job template, a Pod's spec) holds its containers' and init
// containers' names and images and nothing else; a value of the wrong type
// in what is skipped is not an error.
func (r *Request) Observed(gvk schema.GroupVersionKind, namespace, name string, into any) (bool, error) {
	return lookup(r.Children, "children", gvk, namespace, name, into, r.prefetched, r.reads, r.budget, r.takePrepaid)
}

// ObservedAs is Observed for callers that want a pointer back: the decoded
// child, or nil when it was not observed.
func ObservedAs[T any](r *Request, gvk schema.GroupVersionKind, namespace, name string) (*T, error) {
	if raw, _, found := find(r.Children, gvk, namespace, name); found {
		if v, ok := takeAs[T](r.prefetched, raw); ok {
			return v, nil // the value the scan decoded itself, not a copy
		}
	}
	var obj T
	found, err := r.Observed(gvk, namespace, name, &obj)
	if err != nil || !found {
		return nil, err
	}
	return &obj, nil
}

// ObservedRelated is Observed for the related objects the customize hook selected.
func (r *Request) ObservedRelated(gvk schema.GroupVersionKind, namespace, name string, into any) (bool, error) {
	return lookup(r.Related, "related", gvk, namespace, name, into, nil, nil, r.budget, nil)
}

// RelatedKeys are the keys ("name" or "namespace/name") of the related
// objects of the type, sorted: for rules by label selector, whose names the
// hook does not know. Each is a name ObservedRelated accepts.
func (r *Request) RelatedKeys(gvk schema.GroupVersionKind) []string {
	objects := r.Related[TypeKey(gvk)]
	keys := make([]string, 0, len(objects))
	for key := range objects {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	return keys
}

// HasRelated reports whether the request carries related objects of the type
// at all, even none: Metacontroller sends the type key, possibly empty, for
// every rule the customize hook returned, and no key when no rule (or no
// customize hook) asked for the type.
func (r *Request) HasRelated(gvk schema.GroupVersionKind) bool {
	var buf typeKeyBuffer
	_, ok := r.Related[string(appendTypeKey(buf[:0], gvk))]
	return ok
}

// find is the raw child of the type and name in m (under "name" or
// "namespace/name": key says which), and whether there is one.
func find(m ChildMap, gvk schema.GroupVersionKind, namespace, name string) (raw json.RawMessage, key string, ok bool) {
	var buf typeKeyBuffer
	objects := m[string(appendTypeKey(buf[:0], gvk))]
	if raw, ok = objects[name]; ok || namespace == "" {
		return raw, name, ok
	}
	key = namespace + "/" + name
	raw, ok = objects[key]
	return raw, key, ok
}

// lookup decodes the child of the type and name in m into into, cut as
// the scan cut it with reads (nil, or not one of its kinds: as any observed
// object, decodeObserved), unless pre holds it decoded already; prepaid
// (nil: none) says what a child of reads' kinds still pays, the slow path
// having taken its cost already.
func lookup(m ChildMap, section string, gvk schema.GroupVersionKind, namespace, name string, into any, pre prefetched, reads *Prefetch, budget *costBudget, prepaid func([]byte) payment) (bool, error) {
	raw, key, ok := find(m, gvk, namespace, name)
	if !ok {
		return false, nil
	}
	if pre.take(raw, into) { // decoded, and its name checked, by the scan
		return true, nil
	}
	field := func() string { return ChildPath(section, TypeKey(gvk), key) } // on error paths only
	if trimmed := trimJSONSpace(raw); len(trimmed) == 0 || trimmed[0] != '{' {
		// Metacontroller sends every child as the full object; a null here
		// must not read as a child with every field empty.
		return false, &RequestError{Field: field(), Reason: "must be an object (the observed child), got " + jsonKind(trimmed)}
	}
	tree := reads.childTree(gvk, into) // only here: a prefetched child needs none
	paid := unpaid
	if tree != nil && prepaid != nil {
		paid = prepaid(raw)
	}
	if tree == nil {
		tree = pruneTreeOf(reflect.TypeOf(into).Elem(), true)
	}
	if err := decodeTree(raw, into, tree, budget, paid); err != nil {
		path := field()
		var costErr *CostError
		if errors.As(err, &costErr) {
			return false, costErr.Within(path)
		}
		var decodeErr *DecodeError
		if errors.As(err, &decodeErr) && decodeErr.Field != "" {
			path += "." + decodeErr.Field
			err = errors.New(decodeErr.Reason)
		}
		return false, &RequestError{Field: path, Reason: err.Error()}
	}
	if named, ok := into.(interface{ GetName() string }); ok && named.GetName() == "" {
		return false, &RequestError{Field: field() + ".metadata.name", Reason: "required: an observed child always has its metadata"}
	}
	return true, nil
}

// jsonKind names the JSON type of a value for a message.
func jsonKind(raw []byte) string {
	switch {
	case len(raw) == 0:
		return "nothing"
	case raw[0] == 'n':
		return "null"
	case raw[0] == '[':
		return "an array"
	case raw[0] == '"':
		return "a string"
	case raw[0] == 't' || raw[0] == 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// CheckKind fails with *RequestError unless the parent's apiVersion and kind
// are the ones the hook serves: a Database posted to the MyApp hook must not be
// read as a MyApp with every field missing.
func CheckKind(apiVersion, kind string, want schema.GroupVersionKind) error {
	if apiVersion != want.GroupVersion().String() || kind != want.Kind {
		return &RequestError{
			Field:  "parent",
			Reason: fmt.Sprintf("this hook serves %s %s, got apiVersion %s kind %s", want.GroupVersion(), want.Kind, Quote(apiVersion), Quote(kind)),
		}
	}
	return nil
}
