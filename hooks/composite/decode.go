package composite

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The hot path of decoding. Requests and objects are decoded once here, by
// go-json-experiment/json with encoding/json's semantics made case-sensitive
// (the rules of sigs.k8s.io/json, which the API server uses), and without
// building what no hook reads: managedFields is skipped (checked only to be
// JSON), the controller object and the request's children stay sub-slices of
// the body. Only when this fails does the caller decode again with
// sigs.k8s.io/json, so that every error is the one the API server's decoder
// gives, and no input that decoder refuses is accepted, but inside
// managedFields, which is only checked to be JSON (a wrong type or a name
// repeated there is taken).

// fastDecodeOptions: names matched case-sensitively, as the API server
// does; unknown names ignored; a name repeated in an object refused
// (decodeSlow then names it); base64 and invalid UTF-8 taken as
// encoding/json takes them; managedFields skipped. Plain v2 semantics
// otherwise: on typed Kubernetes objects they decode what encoding/json
// decodes (FuzzDecodeObject checks it against decodeSlow), and the full v1
// emulation (jsonv1.DefaultOptionsV1) costs half as much time again.
var fastDecodeOptions = jsonv2.JoinOptions(
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(true),
	jsonv1.ParseBytesWithLooseRFC4648(true),
	jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
		jsonv2.UnmarshalFromFunc(skipManagedFields),
		jsonv2.UnmarshalFromFunc(readTime),
		jsonv2.UnmarshalFromFunc(readStringMap),
	)),
)

// observedDecodeOptions are fastDecodeOptions for observed and related
// objects: besides managedFields, every pod spec in them (a StatefulSet's or
// Job's template, a CronJob's job template, a Pod's own) is read as its
// containers' and init containers' names and images only (readPodSpec). No
// hook reads more of an observed pod spec, and it is most of an observed
// StatefulSet's bytes.
var observedDecodeOptions = jsonv2.JoinOptions(
	fastDecodeOptions,
	jsonv2.WithUnmarshalers(jsonv2.JoinUnmarshalers(
		jsonv2.UnmarshalFromFunc(skipManagedFields),
		jsonv2.UnmarshalFromFunc(readTime),
		jsonv2.UnmarshalFromFunc(readStringMap),
		jsonv2.UnmarshalFromFunc(readPodSpec),
	)),
)

// skipManagedFields reads metadata.managedFields without building it: no hook
// reads it, and the API server may make it most of an object's bytes.
func skipManagedFields(dec *jsontext.Decoder, _ *[]metav1.ManagedFieldsEntry) error {
	return skipRaw(dec)
}

// skipRaw reads the next value whole and drops it: a value kept raw or never
// read. It checks the value to be JSON, as json.RawMessage does in the slow
// decoder, and, as that does, allows a name repeated in its objects (the
// decoder refuses them everywhere else).
func skipRaw(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case '{', '[':
		return jsonv2.UnmarshalDecode(dec, &rawValue{}, repeatedNamesAllowed)
	}
	_, err := dec.ReadValue()
	return err
}

var repeatedNamesAllowed = jsontext.AllowDuplicateNames(true)

// rawValue is a value skipRaw reads whole, with the decoder's options of
// the moment. It has no size, so a pointer to one costs no allocation.
type rawValue struct{}

func (*rawValue) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	_, err := dec.ReadValue()
	return err
}

// readTime reads a metav1.Time as its UnmarshalJSON does (null is the zero
// time; a string is RFC 3339, made local), without the encoding/json
// decode of the string that method makes. Anything else fails, and the slow
// decoder gives the error.
func readTime(dec *jsontext.Decoder, t *metav1.Time) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		t.Time = time.Time{}
		return nil
	case '"':
		parsed, err := time.Parse(time.RFC3339, tok.String())
		if err != nil {
			return err
		}
		t.Time = parsed.Local()
		return nil
	}
	return errors.New("a time must be a string")
}

// readStringMap reads an object of strings (labels, annotations, a
// selector's matchLabels, a ConfigMap's data) with plain map writes instead
// of the reflective map decode. It decodes what both decoders decode: null
// is a nil map, {} an empty one, a null member the empty string; names
// repeated are refused by the decoder itself. Anything else fails, and the
// slow decoder gives the error.
func readStringMap(dec *jsontext.Decoder, m *map[string]string) error {
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	switch tok.Kind() {
	case 'n':
		*m = nil
		return nil
	case '{':
	default:
		return errors.New("a map of strings must be an object")
	}
	out := *m
	if out == nil {
		out = make(map[string]string)
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return err
		}
		name := tok.String() // before the next read voids tok
		if tok, err = dec.ReadToken(); err != nil {
			return err
		}
		switch tok.Kind() {
		case '"':
			out[name] = tok.String()
		case 'n':
			out[name] = ""
		default:
			return errors.New("a map of strings must hold strings")
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	*m = out
	return nil
}

// readPodSpec reads an observed pod spec into its containers' and init
// containers' names and images (what kube.TemplateChange compares), skipping
// the rest (volumes, probes, environment, the other fields of each
// container) without building it.
func readPodSpec(dec *jsontext.Decoder, spec *corev1.PodSpec) error {
	var read struct {
		InitContainers []namedImage `json:"initContainers"`
		Containers     []namedImage `json:"containers"`
	}
	if err := jsonv2.UnmarshalDecode(dec, &read); err != nil {
		return err
	}
	*spec = corev1.PodSpec{InitContainers: podContainers(read.InitContainers), Containers: podContainers(read.Containers)}
	return nil
}

// namedImage is what readPodSpec reads of a container.
type namedImage struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// podContainers are the containers read, nil when the list was missing or
// null, as a full decode leaves it.
func podContainers(read []namedImage) []corev1.Container {
	if read == nil {
		return nil
	}
	containers := make([]corev1.Container, len(read))
	for i, c := range read {
		containers[i] = corev1.Container{Name: c.Name, Image: c.Image}
	}
	return containers
}

// decodeFast decodes raw into into, leaving into zeroed when it fails.
func decodeFast(raw []byte, into any) bool {
	return decodeFastWith(raw, into, fastDecodeOptions)
}

// decodeFastWith is decodeFast with the given options.
func decodeFastWith(raw []byte, into any, opts jsonv2.Options) bool {
	if err := jsonv2.Unmarshal(raw, into, opts); err != nil {
		reflect.ValueOf(into).Elem().SetZero()
		return false
	}
	return true
}

// scanOptions: the request's raw parts are kept verbatim, as encoding/json's
// json.RawMessage keeps them (invalid UTF-8 included). A name repeated in
// an object the scan reads (the request, the child maps, a child's members
// and metadata up to its name) fails the scan: such a request takes the
// slow path, which names the duplicate. Inside a value kept raw or skipped
// (skipRaw) a repeated name is allowed, as the slow decoder allows it in a
// json.RawMessage; a later decode of that value refuses it. Every value the
// scan decodes (Prefetch) is as strict as decodeFast.
var scanOptions = []jsontext.Options{jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(true)}

// scanRequest reads a hook request body in one pass without copying: Parent,
// Controller and every child are sub-slices of body. It reports false for
// anything it does not read exactly as encoding/json reads it into Request
// (a field of the wrong type, a name repeated in an object it reads,
// malformed JSON); the caller then decodes the slow way for the precise
// error.
//
// With a Prefetch, the parent and the observed children of its types are
// decoded in this pass (scanDecode) and kept in the Request for the hook.
func scanRequest(body []byte, p *Prefetch) (*Request, bool) {
	dec, done := scanDecoder(body)
	defer done()
	raw := func() (json.RawMessage, bool) {
		start := valueStart(body, dec)
		if skipRaw(dec) != nil {
			return nil, false
		}
		end := int(dec.InputOffset())
		return json.RawMessage(body[start:end:end]), true
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	req := &Request{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken() // a repeated name is an error here (scanOptions)
		if err != nil {
			return nil, false
		}
		name := tok.String()
		var ok bool
		switch name {
		case "parent":
			if p != nil && p.parent != nil && dec.PeekKind() == '{' {
				var parent any
				if req.Parent, parent, ok = scanDecode(dec, body, p.parent, fastDecodeOptions); ok {
					req.prefetch(req.Parent, parent)
				}
			} else {
				req.Parent, ok = raw()
			}
		case "controller":
			req.Controller, ok = raw()
		case "children":
			req.Children, ok = scanChildMap(dec, body, p, req)
		case "related":
			req.Related, ok = scanChildMap(dec, body, nil, req)
		case "finalizing":
			switch dec.PeekKind() {
			case 't', 'f', 'n':
				tok, err := dec.ReadToken()
				ok = err == nil
				req.Finalizing = ok && tok.Kind() == 't'
			}
		default:
			ok = skipRaw(dec) == nil
		}
		if !ok {
			return nil, false
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, false
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, false
	}
	return req, true
}

// valueStart is where in body the value dec reads next begins: between the
// member name the decoder has read and its value there is only white space
// and the colon.
func valueStart(body []byte, dec *jsontext.Decoder) int {
	start := int(dec.InputOffset())
	for start < len(body) && strings.IndexByte(" \t\n\r:", body[start]) >= 0 {
		start++
	}
	return start
}

// scanDecoder is a decoder reading body in place (a bytes.Buffer is read
// without a copy), reused across requests: checking every object for
// repeated names builds per-object state that a fresh decoder allocates
// anew (83 allocations for the captured 8 KB MyApp request) and a reset one
// keeps. done gives it back; nothing it returned may be used after.
func scanDecoder(body []byte) (dec *jsontext.Decoder, done func()) {
	s, _ := scanDecoders.Get().(*scanState)
	if s == nil {
		s = &scanState{}
		s.buf = *bytes.NewBuffer(body)
		s.dec = jsontext.NewDecoder(&s.buf, scanOptions...)
	} else {
		s.buf = *bytes.NewBuffer(body)
		s.dec.Reset(&s.buf, scanOptions...)
	}
	return s.dec, func() {
		s.buf = bytes.Buffer{}
		s.dec.Reset(&s.buf, scanOptions...) // drops its reference to body
		scanDecoders.Put(s)
	}
}

// scanState is a pooled scan decoder and the buffer it reads.
type scanState struct {
	buf bytes.Buffer
	dec *jsontext.Decoder
}

var scanDecoders sync.Pool

// scanChildMap reads {"<type key>": {"<name>": object, ...}, ...} or null,
// decoding the objects of p's types into req.
func scanChildMap(dec *jsontext.Decoder, body []byte, p *Prefetch, req *Request) (ChildMap, bool) {
	if dec.PeekKind() == 'n' {
		_, err := dec.ReadToken()
		return nil, err == nil
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	m := ChildMap{}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false
		}
		typeKey := tok.String()
		if dec.PeekKind() == 'n' {
			if _, err := dec.ReadToken(); err != nil {
				return nil, false
			}
			m[typeKey] = nil
			continue
		}
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return nil, false
		}
		objects := map[string]json.RawMessage{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, false
			}
			name := tok.String()
			var value json.RawMessage
			var ok bool
			if t := p.childType(typeKey); t != nil {
				value, ok = scanObservedChild(dec, body, t, req)
			} else {
				value, ok = scanChild(dec, body)
			}
			if !ok {
				return nil, false
			}
			objects[name] = value
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, false
		}
		m[typeKey] = objects
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, false
	}
	return m, true
}

// scanChild reads one observed object, a sub-slice of body, and reports
// false (leaving the request to the slow decoder and checkChildren's precise
// error) unless it is an object whose first metadata is an object whose
// first name is a non-empty string. It reads the object once: its members
// are walked with the request's decoder, not read whole and read again.
func scanChild(dec *jsontext.Decoder, body []byte) (json.RawMessage, bool) {
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, false
	}
	start := int(dec.InputOffset()) - 1 // the '{' just read
	named := false
	ok := scanMembers(dec, `"metadata"`, func() bool {
		if dec.PeekKind() != '{' {
			return skipRaw(dec) == nil
		}
		if _, err := dec.ReadToken(); err != nil {
			return false
		}
		return scanMembers(dec, `"name"`, func() bool {
			name, err := dec.ReadValue()
			named = err == nil && name[0] == '"' && len(name) > 2
			return err == nil
		})
	})
	if !ok {
		return nil, false
	}
	end := int(dec.InputOffset())
	return json.RawMessage(body[start:end:end]), named
}

// scanMembers reads the members of an object whose '{' dec has just read,
// and its '}': read reads the value of the first member named key (quoted,
// as it is written), every other value is skipped. It reports false when
// the JSON is malformed or read does.
func scanMembers(dec *jsontext.Decoder, key string, read func() bool) bool {
	seen := false
	for dec.PeekKind() == '"' {
		name, err := dec.ReadValue()
		if err != nil {
			return false
		}
		if seen || string(name) != key {
			if skipRaw(dec) != nil {
				return false
			}
			continue
		}
		seen = true
		if !read() {
			return false
		}
	}
	tok, err := dec.ReadToken()
	return err == nil && tok.Kind() == '}'
}
