package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	dbv1 "metahooks/api/v1"
	"metahooks/api/v1alpha1"
	"metahooks/hooks/composite"
	"metahooks/hooks/database"
	"metahooks/hooks/myapp"
)

// renderConfig holds the render command's flags.
type renderConfig struct {
	parentFile   string
	observedFile string
	requestFile  string
	finalizing   bool
	now          time.Time
	keyFile      string
	agentImage   string
	// namespace is the parent's when its manifest has none, as kubectl
	// applies it to the context's namespace; namespaceGiven: -n was set.
	namespace      string
	namespaceGiven bool
}

// renderPlaceholderKey derives Database passwords when render is given no
// --credentials-key-file. Render output made with it must never be applied.
const renderPlaceholderKey = "metahooks-render-placeholder-key-not-for-clusters"

func parseRenderFlags(args []string, stderr io.Writer) (renderConfig, error) {
	var cfg renderConfig
	var now string
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.parentFile, "f", "", "parent object, YAML or JSON (- for stdin)")
	fs.StringVar(&cfg.observedFile, "observed", "", "observed children, and related objects such as a Database's PVCs: a YAML stream or a List")
	fs.StringVar(&cfg.requestFile, "request", "", "a whole captured Metacontroller request (JSON); replaces -f and --observed")
	fs.BoolVar(&cfg.finalizing, "finalizing", false, "render a finalize call instead of a sync call")
	fs.StringVar(&cfg.keyFile, "credentials-key-file", "", "the service's credentials key, so Database passwords come out as in the cluster; a placeholder key when empty")
	fs.StringVar(&cfg.agentImage, "instance-agent-image", "", "the service's own image, for the reporter container of a Database with spec.instances >= 2 (required for those)")
	fs.StringVar(&now, "now", "", "the time to use for new condition transitions (RFC3339); the current time when empty")
	for _, name := range []string{"n", "namespace"} {
		fs.StringVar(&cfg.namespace, name, "default", "the parent's namespace when -f's manifest names none (as kubectl apply -n); one it names must be this one")
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	fs.Visit(func(f *flag.Flag) { cfg.namespaceGiven = cfg.namespaceGiven || f.Name == "n" || f.Name == "namespace" })
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected arguments: %v", fs.Args())
	case cfg.requestFile == "" && cfg.parentFile == "":
		return cfg, errors.New("give a parent with -f, or a captured request with --request")
	case cfg.requestFile != "" && (cfg.parentFile != "" || cfg.observedFile != "" || cfg.finalizing):
		return cfg, errors.New("--request already holds the parent, the children and finalizing; drop -f, --observed and --finalizing")
	}
	cfg.now = time.Now()
	if now != "" {
		t, err := time.Parse(time.RFC3339, now)
		if err != nil {
			return cfg, fmt.Errorf("--now: %w", err)
		}
		cfg.now = t
	}
	return cfg, nil
}

func renderCommand(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseRenderFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "metahooks render:", err)
		return 2
	}
	if cfg.keyFile == "" {
		fmt.Fprintln(stderr, "metahooks render: no --credentials-key-file: Database passwords come from a placeholder key")
	}
	out, err := render(cfg, stdin)
	if err != nil {
		fmt.Fprintln(stderr, "metahooks render:", err)
		return 1
	}
	_, _ = stdout.Write(out)
	return 0
}

// render builds the request Metacontroller would send, calls the same hook
// function the HTTP server calls, and prints the desired children as a YAML
// stream followed by one document with the status (and resyncAfterSeconds and
// finalized when set).
func render(cfg renderConfig, stdin io.Reader) ([]byte, error) {
	req, err := renderRequest(cfg, stdin)
	if err != nil {
		return nil, err
	}
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := json.Unmarshal(req.Parent, &meta); err != nil {
		return nil, fmt.Errorf("cannot read the parent's kind: %w", err)
	}
	db, err := databaseHook(cfg.keyFile, cfg.agentImage)
	if err != nil {
		return nil, err
	}
	if cfg.keyFile == "" {
		if db.sync, err = database.Hook([]byte(renderPlaceholderKey), cfg.agentImage); err != nil {
			return nil, err
		}
	}
	hook, ok := hookForKind(parentHooks(db), meta.APIVersion, meta.Kind)
	if !ok {
		return nil, fmt.Errorf("no hook serves apiVersion %q kind %q", meta.APIVersion, meta.Kind)
	}
	if hook.customize != nil && cfg.requestFile == "" {
		if err := relateObserved(req, hook.customize); err != nil {
			return nil, err
		}
	}
	response, err := hook.sync(req, cfg.now)
	if err != nil {
		return nil, err
	}
	return responseYAML(response)
}

func renderRequest(cfg renderConfig, stdin io.Reader) (*composite.Request, error) {
	if cfg.requestFile != "" {
		body, err := readInput(cfg.requestFile, stdin)
		if err != nil {
			return nil, err
		}
		return composite.DecodeRequest(body)
	}
	parentYAML, err := readInput(cfg.parentFile, stdin)
	if err != nil {
		return nil, err
	}
	parent, err := yaml.YAMLToJSONStrict(parentYAML) // a key given twice is refused, as kubectl apply refuses it
	if err != nil {
		return nil, fmt.Errorf("cannot parse %s: %w", cfg.parentFile, err)
	}
	if parent, err = strictParent(parent, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.parentFile, err)
	}
	req := &composite.Request{Parent: parent, Children: composite.ChildMap{}, Related: composite.ChildMap{}, Finalizing: cfg.finalizing}
	if cfg.observedFile != "" {
		stream, err := readInput(cfg.observedFile, stdin)
		if err != nil {
			return nil, err
		}
		if req.Children, err = observedChildren(stream); err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", cfg.observedFile, err)
		}
	}
	// Round-trip through the wire format, so render checks exactly what the
	// HTTP hook checks.
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	return composite.DecodeRequest(body)
}

// strictParents are the parents render reads from a manifest, by kind, as
// the API server decodes them for kubectl apply.
var strictParents = map[schema.GroupVersionKind]func() any{
	myapp.GroupVersionKind:    func() any { return new(v1alpha1.MyApp) },
	database.GroupVersionKind: func() any { return new(dbv1.Database) },
}

// strictParent checks a parent manifest as kubectl apply's strict field
// validation (the default since Kubernetes 1.27) does: a field its kind
// does not have, such as spec.sise, or a key given twice, is refused,
// where the hook would read past it. A parent without a namespace gets
// cfg's (kubectl's -n); one with another namespace than a given -n is
// refused, as kubectl refuses it. A kind no hook serves is left to
// render's own error.
func strictParent(parent []byte, cfg renderConfig) ([]byte, error) {
	var object map[string]any
	if err := json.Unmarshal(parent, &object); err != nil || object == nil {
		return nil, errors.New("the parent is not an object")
	}
	apiVersion, _ := object["apiVersion"].(string)
	kind, _ := object["kind"].(string)
	typed, known := strictParents[schema.FromAPIVersionAndKind(apiVersion, kind)]
	if !known {
		return parent, nil
	}
	strict, err := kjson.UnmarshalStrict(parent, typed(), kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return nil, fmt.Errorf("%s %s cannot be read: %w", apiVersion, kind, err)
	}
	if len(strict) > 0 {
		messages := make([]string, len(strict))
		for i, e := range strict {
			messages[i] = e.Error()
		}
		return nil, fmt.Errorf("strict decoding error: %s (kubectl apply refuses it too)", strings.Join(messages, ", "))
	}
	metadata, _ := object["metadata"].(map[string]any)
	if metadata == nil {
		metadata = map[string]any{}
		object["metadata"] = metadata
	}
	switch namespace, _ := metadata["namespace"].(string); {
	case namespace == "":
		metadata["namespace"] = cfg.namespace
	case cfg.namespaceGiven && namespace != cfg.namespace:
		return nil, fmt.Errorf("the namespace of the parent (%s) does not match the namespace given with -n (%s)", composite.Quote(namespace), composite.Quote(cfg.namespace))
	default:
		return parent, nil
	}
	return json.Marshal(object)
}

// relateObserved plays Metacontroller's customize manager for a parent with a
// customize hook: the observed objects its rules select move from children to
// related, and every rule's type key is there, even with nothing selected.
// (A captured --request already has its related objects.)
func relateObserved(req *composite.Request, customize composite.CustomizeFunc) error {
	answer, err := customize(&composite.CustomizeRequest{Parent: req.Parent})
	if err != nil {
		return err
	}
	if req.Related == nil {
		req.Related = composite.ChildMap{}
	}
	for _, rule := range answer.RelatedResources {
		gvk, known := kindOf(rule.APIVersion, rule.Resource)
		if !known {
			return fmt.Errorf("render knows no kind for related resource %s %s", rule.APIVersion, rule.Resource)
		}
		related := composite.TypeKey(gvk)
		if req.Related[related] == nil {
			req.Related[related] = map[string]json.RawMessage{}
		}
		objects := req.Children[related]
		for name, raw := range objects {
			if len(rule.Names) == 0 || slices.Contains(rule.Names, name) {
				addObject(req.Related, related, name, raw)
				delete(objects, name)
			}
		}
		if objects != nil && len(objects) == 0 {
			delete(req.Children, related)
		}
	}
	return nil
}

// coreScheme knows the core/v1 kinds, the only ones customize rules name.
var coreScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// kindOf is the type of a resource (plural) of apiVersion, as far as
// coreScheme knows it; false when it does not.
func kindOf(apiVersion, resource string) (schema.GroupVersionKind, bool) {
	for gvk := range coreScheme.AllKnownTypes() {
		if gvk.GroupVersion().String() != apiVersion {
			continue
		}
		if plural, _ := meta.UnsafeGuessKindToResource(gvk); plural.Resource == resource {
			return gvk, true
		}
	}
	return schema.GroupVersionKind{}, false
}

func addObject(m composite.ChildMap, typeKey, name string, raw json.RawMessage) {
	if m[typeKey] == nil {
		m[typeKey] = map[string]json.RawMessage{}
	}
	m[typeKey][name] = raw
}

// observedChildren reads a YAML (or JSON) stream of objects, or Lists of them,
// into the children map Metacontroller would send (v1 keys: the name).
func observedChildren(stream []byte) (composite.ChildMap, error) {
	children := composite.ChildMap{}
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(stream), 4096)
	for {
		var object map[string]any
		if err := decoder.Decode(&object); errors.Is(err, io.EOF) {
			return children, nil
		} else if err != nil {
			return nil, err
		}
		if object == nil {
			continue
		}
		items := []any{object}
		if list, ok := object["items"].([]any); ok {
			items = list
		}
		for _, item := range items {
			if err := addChild(children, item); err != nil {
				return nil, err
			}
		}
	}
}

func addChild(children composite.ChildMap, item any) error {
	raw, err := json.Marshal(item)
	if err != nil {
		return err
	}
	var meta struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return err
	}
	if meta.APIVersion == "" || meta.Kind == "" || meta.Metadata.Name == "" {
		return fmt.Errorf("every observed object needs apiVersion, kind and metadata.name; got %q %q %q", meta.APIVersion, meta.Kind, meta.Metadata.Name)
	}
	addObject(children, composite.TypeKey(schema.FromAPIVersionAndKind(meta.APIVersion, meta.Kind)), meta.Metadata.Name, raw)
	return nil
}

func responseYAML(response *composite.Response) ([]byte, error) {
	var out bytes.Buffer
	for _, child := range response.Children {
		doc, err := yaml.JSONToYAML(child.JSON)
		if err != nil {
			return nil, err
		}
		out.WriteString("---\n")
		out.Write(doc)
	}
	tail := map[string]any{"status": response.Status}
	if response.ResyncAfterSeconds > 0 {
		tail["resyncAfterSeconds"] = response.ResyncAfterSeconds
	}
	if response.Finalized {
		tail["finalized"] = true
	}
	raw, err := json.Marshal(tail)
	if err != nil {
		return nil, err
	}
	doc, err := yaml.JSONToYAML(raw)
	if err != nil {
		return nil, err
	}
	out.WriteString("--- # hook response: status, resyncAfterSeconds, finalized\n")
	out.Write(doc)
	return out.Bytes(), nil
}

func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}
