package myapp

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
