package composite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

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
}

// ChildMap maps a type key ("ConfigMap.v1", "StatefulSet.apps/v1") to the objects
// of that type, keyed by "name" (hook version v1) or "namespace/name" (v2).
type ChildMap map[string]map[string]json.RawMessage

// TypeKey returns Metacontroller's key for a child type: "Kind.version" for the
// core group and "Kind.group/version" otherwise.
func TypeKey(gvk schema.GroupVersionKind) string {
	return gvk.Kind + "." + gvk.GroupVersion().String()
}

// DecodeRequest parses a hook request body. It fails with *RequestError when the
// body is not JSON, is not an object, or has a field of the wrong shape.
func DecodeRequest(body []byte) (*Request, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, &RequestError{Field: "body", Reason: "empty; want a Metacontroller hook request object"}
	}
	if trimmed[0] != '{' {
		return nil, &RequestError{Field: "body", Reason: "not a JSON object; want a Metacontroller hook request object"}
	}
	var req Request
	if err := kjson.UnmarshalCaseSensitivePreserveInts(trimmed, &req); err != nil {
		return nil, requestDecodeError(err)
	}
	if len(bytes.TrimSpace(req.Parent)) == 0 || bytes.Equal(bytes.TrimSpace(req.Parent), []byte("null")) {
		return nil, &RequestError{Field: "parent", Reason: "required"}
	}
	if bytes.TrimSpace(req.Parent)[0] != '{' {
		return nil, &RequestError{Field: "parent", Reason: "must be an object"}
	}
	return &req, nil
}

func requestDecodeError(err error) error {
	if isSyntax, offset := kjson.SyntaxErrorOffset(err); isSyntax {
		return &RequestError{Field: "body", Reason: fmt.Sprintf("malformed JSON at byte %d: %v", offset, err)}
	}
	var fieldErr kjson.FieldError
	if errors.As(err, &fieldErr) {
		return &RequestError{Field: fieldErr.FieldPath(), Reason: err.Error()}
	}
	return &RequestError{Field: "body", Reason: err.Error()}
}

// DecodeObject decodes one Kubernetes object (the parent or a child) into a typed
// value with the API server's rules: keys are case-sensitive and unknown fields
// are ignored. A value of the wrong type is reported with its full field path,
// prefixed by path (e.g. `children["StatefulSet.apps/v1"]["demo"]`).
func DecodeObject(raw json.RawMessage, into any) error {
	return kjson.UnmarshalCaseSensitivePreserveInts(raw, into)
}

// FieldPath returns the JSON path of the field a decode error points at, or ""
// when the error does not name one.
func FieldPath(err error) string {
	var fieldErr kjson.FieldError
	if errors.As(err, &fieldErr) {
		return fieldErr.FieldPath()
	}
	return ""
}

// Observed returns the observed child of the given type and name in the
// parent's namespace, decoded into into. It accepts both the v1 key ("name") and
// the v2 key ("namespace/name"). It reports false when no such child was
// observed, and a *RequestError when the child does not decode.
func (r *Request) Observed(gvk schema.GroupVersionKind, namespace, name string, into any) (bool, error) {
	typeKey := TypeKey(gvk)
	objects := r.Children[typeKey]
	raw, ok := objects[name]
	key := name
	if !ok && namespace != "" {
		key = namespace + "/" + name
		raw, ok = objects[key]
	}
	if !ok {
		return false, nil
	}
	if err := DecodeObject(raw, into); err != nil {
		field := fmt.Sprintf("children[%q][%q]", typeKey, key)
		if path := FieldPath(err); path != "" {
			field += "." + path
		}
		return false, &RequestError{Field: field, Reason: err.Error()}
	}
	return true, nil
}

// CheckKind fails with *RequestError unless the parent's apiVersion and kind
// are the ones the hook serves: a Database posted to the MyApp hook must not be
// read as a MyApp with every field missing.
func CheckKind(apiVersion, kind string, want schema.GroupVersionKind) error {
	if apiVersion != want.GroupVersion().String() || kind != want.Kind {
		return &RequestError{
			Field:  "parent",
			Reason: fmt.Sprintf("this hook serves %s %s, got apiVersion %q kind %q", want.GroupVersion(), want.Kind, apiVersion, kind),
		}
	}
	return nil
}
