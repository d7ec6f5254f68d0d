package myapp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"metahooks/api/v1alpha1"
	"metahooks/hooks/composite"
)

func TestParseParentRejects(t *testing.T) {
	cases := map[string]struct {
		reason    string
		spec      map[string]any
		wantField string
	}{
		"ReplicaCountString": {
			reason:    "the captured failure: a string where an integer belongs",
			spec:      withSpec(map[string]any{"replicaCount": "KeyError: 'replicaCount'"}),
			wantField: "spec.replicaCount",
		},
		"ReplicaCountNegative": {reason: "replicas can't be negative", spec: withSpec(map[string]any{"replicaCount": -1}), wantField: "spec.replicaCount"},
		"ReplicaCountFraction": {reason: "replicas are whole", spec: withSpec(map[string]any{"replicaCount": 1.5}), wantField: "spec.replicaCount"},
		"ImageEmpty":           {reason: "an image is required", spec: withSpec(map[string]any{"image": ""}), wantField: "spec.image"},
		"ImageBlank":           {reason: "whitespace is no image", spec: withSpec(map[string]any{"image": "  "}), wantField: "spec.image"},
		"ImageMissing":         {reason: "an image is required", spec: map[string]any{"replicaCount": 1}, wantField: "spec.image"},
		"PortZero":             {reason: "ports start at 1", spec: withSpec(map[string]any{"port": 0}), wantField: "spec.port"},
		"PortTooHigh":          {reason: "ports end at 65535", spec: withSpec(map[string]any{"port": 70000}), wantField: "spec.port"},
		"CronSixFields": {
			reason:    "a 6-field line with seconds is a common mistake",
			spec:      withSpec(map[string]any{"backupSchedule": "0 0 2 * * *", "backup": map[string]any{"command": []string{"backup"}}}),
			wantField: "spec.backupSchedule",
		},
		"CronBadValue": {
			reason:    "minute 61 does not exist",
			spec:      withSpec(map[string]any{"backupSchedule": "61 2 * * *", "backup": map[string]any{"command": []string{"backup"}}}),
			wantField: "spec.backupSchedule",
		},
		"CronDescriptor": {
			reason:    "only 5-field lines, as the CRD pattern says",
			spec:      withSpec(map[string]any{"backupSchedule": "@daily", "backup": map[string]any{"command": []string{"backup"}}}),
			wantField: "spec.backupSchedule",
		},
		"RetentionZero": {
			reason:    "the default backup keeps at least one archive",
			spec:      withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"retention": 0}}),
			wantField: "spec.backup.retention",
		},
		"BackupVolumeZero": {
			reason:    "a backups volume needs a size",
			spec:      withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"volumeSize": "0"}}),
			wantField: "spec.backup.volumeSize",
		},
		"BackupVolumeHuge": {
			reason:    "past 8Pi a quantity overflows what the API server counts in",
			spec:      withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"volumeSize": "9Pi"}}),
			wantField: "spec.backup.volumeSize",
		},
		"BackupImageSpace": {
			reason:    "an image reference has no white space",
			spec:      withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"image": "busy box"}}),
			wantField: "spec.backup.image",
		},
		"RestoreFromPath": {
			reason:    "a backup name is a time stamp, never a path on the backups volume",
			spec:      withSpec(map[string]any{"restoreFrom": "../data-demo-0/x"}),
			wantField: "spec.restoreFrom",
		},
		"RestoreFromBadTime": {
			reason:    "a backup name is a real UTC time",
			spec:      withSpec(map[string]any{"restoreFrom": "20261399T020000Z"}),
			wantField: "spec.restoreFrom",
		},
		"ConfigKeyInvalid": {
			reason:    "ConfigMap keys are restricted",
			spec:      withSpec(map[string]any{"config": map[string]any{"bad key": "x"}}),
			wantField: `spec.config["bad key"]`,
		},
		"ConfigValueNotString": {
			reason:    "config values are strings",
			spec:      withSpec(map[string]any{"config": map[string]any{"workers": 4}}),
			wantField: "spec.config",
		},
		"StorageZero": {
			reason:    "a volume needs a size",
			spec:      withSpec(map[string]any{"storage": map[string]any{"size": "0"}}),
			wantField: "spec.storage.size",
		},
		"MountPathRelative": {
			reason:    "mount paths are absolute",
			spec:      withSpec(map[string]any{"storage": map[string]any{"mountPath": "data"}}),
			wantField: "spec.storage.mountPath",
		},
		"HighAvailabilityString": {
			reason:    "highAvailability is a boolean",
			spec:      withSpec(map[string]any{"highAvailability": "yes"}),
			wantField: "spec.highAvailability",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := parseParent(parentJSON(t, tc.spec, nil))
			var invalid *composite.InvalidError
			if !errors.As(err, &invalid) {
				t.Fatalf("%s\nparseParent(...): error = %v (%T), want *composite.InvalidError", tc.reason, err, err)
			}
			if diff := cmp.Diff(tc.wantField, invalid.Field); diff != "" {
				t.Errorf("%s\nparseParent(...): field -want +got:\n%s\nerror: %v", tc.reason, diff, err)
			}
			if !strings.Contains(err.Error(), tc.wantField) {
				t.Errorf("%s\nerror %q does not name the field %s", tc.reason, err, tc.wantField)
			}
		})
	}
}

func TestParseParentDefaults(t *testing.T) {
	a, err := parseParent(parentJSON(t, map[string]any{"image": "registry.example/demo:1.0"}, nil))
	if err != nil {
		t.Fatalf("parseParent(minimal spec): %v", err)
	}
	got := map[string]any{
		"replicas": a.replicas, "port": a.port, "storage": a.storageSize.String(), "mountPath": a.mountPath,
		"ha": a.highAvailability, "schedule": a.backupSchedule,
	}
	want := map[string]any{
		"replicas": int32(1), "port": int32(8080), "storage": "1Gi", "mountPath": "/data",
		"ha": false, "schedule": "",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseParent(minimal spec) defaults: -want +got:\n%s", diff)
	}
}

func TestParseParentWrongKind(t *testing.T) {
	raw := []byte(`{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"db","namespace":"apps"},"spec":{"image":"postgres:17"}}`)
	_, err := parseParent(raw)
	var requestErr *composite.RequestError
	if !errors.As(err, &requestErr) {
		t.Fatalf("parseParent(a Database) = %v, want *composite.RequestError", err)
	}
}

func TestParseParentNameLength(t *testing.T) {
	long := strings.Repeat("a", 46)
	raw := []byte(`{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"` + long + `","namespace":"apps"},"spec":{"image":"x","backupSchedule":"0 2 * * *","backup":{"command":["b"]}}}`)
	_, err := parseParent(raw)
	var invalid *composite.InvalidError
	if !errors.As(err, &invalid) || invalid.Field != "metadata.name" {
		t.Fatalf("parseParent(46-character name with a backup) = %v, want an *InvalidError on metadata.name (CronJob names are at most 52)", err)
	}
	raw = []byte(strings.Replace(string(raw), `"backupSchedule":"0 2 * * *","backup":{"command":["b"]}`, `"replicaCount":1`, 1))
	if _, err := parseParent(raw); err != nil {
		t.Errorf("parseParent(46-character name without a backup) = %v, want it accepted", err)
	}
}

// TestParseParentNameLengthDefaultBackup: the default backup's CronJobs are
// <name>-backup-<ordinal>; the highest ordinal decides.
func TestParseParentNameLengthDefaultBackup(t *testing.T) {
	cases := map[string]struct {
		reason   string
		nameLen  int
		replicas int
		wantErr  bool
	}{
		"FitsOneDigit":  {reason: "43 + len(-backup-9) = 52", nameLen: 43, replicas: 10, wantErr: false},
		"TooLongTwo":    {reason: "43 + len(-backup-10) = 53", nameLen: 43, replicas: 11, wantErr: true},
		"FitsTwoDigits": {reason: "42 + len(-backup-10) = 52", nameLen: 42, replicas: 11, wantErr: false},
		"ZeroReplicas":  {reason: "no replica, no CronJob; the override's limit applies", nameLen: 45, replicas: 0, wantErr: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raw := []byte(fmt.Sprintf(`{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":%q,"namespace":"apps"},"spec":{"image":"x","replicaCount":%d,"backupSchedule":"0 2 * * *"}}`,
				strings.Repeat("a", tc.nameLen), tc.replicas))
			_, err := parseParent(raw)
			var invalid *composite.InvalidError
			if got := errors.As(err, &invalid) && invalid.Field == "metadata.name"; got != tc.wantErr {
				t.Errorf("%s\nparseParent(name of %d, %d replicas) = %v; want an error on metadata.name: %v", tc.reason, tc.nameLen, tc.replicas, err, tc.wantErr)
			}
		})
	}
}

// TestParseParentRefusesWhatTheAPIServerWould: each parent the API server
// admits today (without the CRD's newer rules) but whose children it would
// refuse gets a 422 naming the field once, and saying why.
func TestParseParentRefusesWhatTheAPIServerWould(t *testing.T) {
	named := func(name string, spec map[string]any) json.RawMessage {
		raw := parentJSON(t, spec, nil)
		return json.RawMessage(strings.Replace(string(raw), `"name":"demo"`, `"name":"`+name+`"`, 1))
	}
	resources := func(r map[string]any) map[string]any { return withSpec(map[string]any{"resources": r}) }
	cases := map[string]struct {
		reason     string
		raw        json.RawMessage
		wantField  string
		wantReason string // a substring
	}{
		"NameWithDot":     {reason: "a Service name is a DNS-1035 label", raw: named("my.app", baseSpec()), wantField: "metadata.name", wantReason: "DNS-1035"},
		"NameDigitFirst":  {reason: "a DNS-1035 label starts with a letter", raw: named("1app", baseSpec()), wantField: "metadata.name", wantReason: "DNS-1035"},
		"NameDigit":       {reason: "0 is no Service name", raw: named("0", baseSpec()), wantField: "metadata.name", wantReason: "DNS-1035"},
		"NameTooLong":     {reason: "StatefulSet pod names need 11 spare characters", raw: named(strings.Repeat("a", 53), baseSpec()), wantField: "metadata.name", wantReason: "at most 52"},
		"RequestsOverLim": {reason: "requests may not exceed limits", raw: named("demo", resources(map[string]any{"requests": map[string]any{"cpu": "2"}, "limits": map[string]any{"cpu": "1"}})), wantField: `spec.resources.requests["cpu"]`, wantReason: "less than or equal to the cpu limit 1"},
		"ResourceFoo":     {reason: "foo is no resource name", raw: named("demo", resources(map[string]any{"limits": map[string]any{"foo": "1"}})), wantField: `spec.resources.limits["foo"]`, wantReason: "standard resource"},
		"ResourceK8sIO":   {reason: "kubernetes.io is reserved", raw: named("demo", resources(map[string]any{"limits": map[string]any{"kubernetes.io/foo": "1"}})), wantField: `spec.resources.limits["kubernetes.io/foo"]`, wantReason: "reserved"},
		"NegativeCPU":     {reason: "a negative limit", raw: named("demo", resources(map[string]any{"limits": map[string]any{"cpu": "-1"}})), wantField: `spec.resources.limits["cpu"]`, wantReason: "negative"},
		"HugeStorage":     {reason: "parsed, the value would be clamped to 2^63-1", raw: named("demo", withSpec(map[string]any{"storage": map[string]any{"size": "99999999999999999999999Ei"}})), wantField: "spec.storage.size", wantReason: "out of range"},
		"StorageClass":    {reason: "a StorageClass name is a DNS-1123 subdomain", raw: named("demo", withSpec(map[string]any{"storage": map[string]any{"storageClassName": "Fast!"}})), wantField: "spec.storage.storageClassName", wantReason: "DNS-1123 subdomain"},
		"ConfigTooLarge":  {reason: "a ConfigMap holds at most 1 MiB", raw: named("demo", withSpec(map[string]any{"config": map[string]any{"big": strings.Repeat("x", 1200000)}})), wantField: "spec.config", wantReason: "at most 1048576 bytes"},
		"BadQuantity":     {reason: "a malformed quantity names its path", raw: named("demo", resources(map[string]any{"limits": map[string]any{"memory": "lots"}})), wantField: `spec.resources.limits["memory"]`, wantReason: "malformed quantity"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := parseParent(tc.raw)
			var invalid *composite.InvalidError
			if !errors.As(err, &invalid) {
				t.Fatalf("%s\nparseParent(...): error = %v (%T), want *composite.InvalidError", tc.reason, err, err)
			}
			if diff := cmp.Diff(tc.wantField, invalid.Field); diff != "" {
				t.Errorf("%s\nfield -want +got:\n%s\nerror: %v", tc.reason, diff, err)
			}
			if !strings.Contains(invalid.Reason, tc.wantReason) {
				t.Errorf("%s\nreason %q, want it to say %q", tc.reason, invalid.Reason, tc.wantReason)
			}
			if strings.Count(err.Error(), tc.wantField) != 1 {
				t.Errorf("%s\nerror %q names %s other than once", tc.reason, err, tc.wantField)
			}
		})
	}
	// The limits themselves are accepted.
	for _, ok := range []json.RawMessage{
		named(strings.Repeat("a", 52), baseSpec()),
		named("demo", resources(map[string]any{"requests": map[string]any{"cpu": "1", "example.com/gpu": "1", "hugepages-2Mi": "2Mi"}, "limits": map[string]any{"cpu": "1"}})),
		named("demo", withSpec(map[string]any{"storage": map[string]any{"storageClassName": "fast.ssd-1"}, "config": map[string]any{"big": strings.Repeat("x", 1000000)}})),
	} {
		if _, err := parseParent(ok); err != nil {
			t.Errorf("parseParent(a parent at the limits) = %v, want it accepted", err)
		}
	}
}

// parseParent is parseRequestParent of a parent alone, as the tests build them.
func parseParent(raw []byte) (*app, error) {
	return parseRequestParent(&composite.Request{Parent: raw})
}

// TestPrefetchChangesNoAnswer: Prefetch decodes only the members of the
// observed StatefulSet the hook reads; with it, every MyApp request there is
// a file of (the captured ones and the examples, sync and finalize) gets
// the answer, or the error, it gets decoded whole.
func TestPrefetchChangesNoAnswer(t *testing.T) {
	var files []string
	for _, pattern := range []string{"../../server/testdata/metacontroller/*.json", "../../examples/requests/myapp-*.json"} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	answer := func(req *composite.Request, err error) string {
		if err != nil {
			return "decode error: " + err.Error()
		}
		response, err := Sync(req, testNow)
		if err != nil {
			return "hook error: " + err.Error()
		}
		raw, err := response.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	answered := 0
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(body, []byte(`"kind": "MyApp"`)) {
			continue // the captured headers, a Database request
		}
		whole := answer(composite.DecodeRequest(body))
		prefetched := answer(composite.DecodeRequestPrefetching(body, Prefetch))
		if diff := cmp.Diff(whole, prefetched); diff != "" {
			t.Errorf("%s: answer -decoded whole +with Prefetch:\n%s", file, diff)
		}
		if strings.HasPrefix(whole, "{") {
			answered++
		}
	}
	if answered < 8 {
		t.Errorf("%d requests answered, want the captured and example ones (8 or more)", answered)
	}
}

// BenchmarkDecodeRequestPrefetching is the decode of the captured MyApp
// request (sent compact, as Metacontroller sends it) with Prefetch: the
// scan that also decodes the parent and the observed StatefulSet.
func BenchmarkDecodeRequestPrefetching(b *testing.B) {
	raw, err := os.ReadFile("../../server/testdata/metacontroller/sync-03-children-with-status.json")
	if err != nil {
		b.Fatal(err)
	}
	var body bytes.Buffer
	if err := json.Compact(&body, raw); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(body.Len()))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := composite.DecodeRequestPrefetching(body.Bytes(), Prefetch); err != nil {
			b.Fatal(err)
		}
	}
}

// TestParseParentLimits: every string, list and map the CRD bounds is
// refused one past its limit (api/v1alpha1/limits.go) before anything else
// reads it, the field named, and a 1 MB value quoted by a short prefix; at
// the limit it is accepted.
func TestParseParentLimits(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	entries := func(n int) map[string]any {
		m := make(map[string]any, n)
		for i := range n {
			m["k"+strconv.Itoa(i)] = "v"
		}
		return m
	}
	items := func(n int) []string { return slices.Repeat([]string{"x"}, n) }
	for _, tc := range []struct {
		reason string
		spec   map[string]any
		field  string // "" accepted
	}{
		{"an image at the limit", withSpec(map[string]any{"image": long(v1alpha1.MaxImageLength)}), ""},
		{"an image past it", withSpec(map[string]any{"image": long(v1alpha1.MaxImageLength + 1)}), "spec.image"},
		{"a 1 MB image", withSpec(map[string]any{"image": long(1 << 20)}), "spec.image"},
		{"a 1 MB schedule", withSpec(map[string]any{"backupSchedule": long(1<<20) + " * * * *"}), "spec.backupSchedule"},
		{"a restoreFrom past the limit", withSpec(map[string]any{"restoreFrom": long(v1alpha1.MaxRestoreFromLength + 1)}), "spec.restoreFrom"},
		{"a backup image past the limit", withSpec(map[string]any{"backup": map[string]any{"image": long(v1alpha1.MaxImageLength + 1)}}), "spec.backup.image"},
		{"a mountPath at the limit", withSpec(map[string]any{"storage": map[string]any{"mountPath": "/" + long(v1alpha1.MaxMountPathLength-1)}}), ""},
		{"a mountPath past it", withSpec(map[string]any{"storage": map[string]any{"mountPath": "/" + long(v1alpha1.MaxMountPathLength)}}), "spec.storage.mountPath"},
		{"a command of the most items", withSpec(map[string]any{"backup": map[string]any{"command": items(v1alpha1.MaxBackupCommandItems)}}), ""},
		{"a command of one more", withSpec(map[string]any{"backup": map[string]any{"command": items(v1alpha1.MaxBackupCommandItems + 1)}}), "spec.backup.command"},
		{"a command item past the limit", withSpec(map[string]any{"backup": map[string]any{"command": []string{"sh", long(v1alpha1.MaxBackupCommandItemLength + 1)}}}), "spec.backup.command[1]"},
		{"a config of the most entries", withSpec(map[string]any{"config": entries(v1alpha1.MaxConfigEntries)}), ""},
		{"a config of one more", withSpec(map[string]any{"config": entries(v1alpha1.MaxConfigEntries + 1)}), "spec.config"},
		{"resource limits past the limit", withSpec(map[string]any{"resources": map[string]any{"limits": resourceEntries(v1alpha1.MaxResourceEntries + 1)}}), "spec.resources.limits"},
		{"resource requests past the limit", withSpec(map[string]any{"resources": map[string]any{"requests": resourceEntries(v1alpha1.MaxResourceEntries + 1)}}), "spec.resources.requests"},
		{"resource claims: the pods have none to name", withSpec(map[string]any{"resources": map[string]any{"claims": []map[string]any{{"name": "gpu"}}}}), "spec.resources.claims"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			_, err := parseParent(parentJSON(t, tc.spec, nil))
			if tc.field == "" {
				if err != nil {
					t.Fatalf("parseParent: %.300v", err)
				}
				return
			}
			var invalid *composite.InvalidError
			if !errors.As(err, &invalid) || invalid.Field != tc.field {
				t.Fatalf("parseParent: %.300v, want an InvalidError of %s", err, tc.field)
			}
			if len(err.Error()) > 512 {
				t.Errorf("error has %d bytes: %.300s", len(err.Error()), err)
			}
		})
	}
}

// resourceEntries are n extended resources of 1 each.
func resourceEntries(n int) map[string]any {
	m := make(map[string]any, n)
	for i := range n {
		m["example.com/r"+strconv.Itoa(i)] = "1"
	}
	return m
}
