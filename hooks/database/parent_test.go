package database

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

func TestSyncRejectsInvalidParents(t *testing.T) {
	cases := map[string]struct {
		reason string
		mutate func(*dbv1.Database)
		want   *composite.InvalidError // Field, and a substring of Reason
	}{
		"NameDigitFirst": {
			reason: "the name is a Service's: a DNS-1035 label starts with a letter",
			mutate: func(db *dbv1.Database) { db.Name = "1db" },
			want:   &composite.InvalidError{Field: "metadata.name", Reason: "DNS-1035"},
		},
		"StorageClassName": {
			reason: "a StorageClass name is a DNS-1123 subdomain",
			mutate: func(db *dbv1.Database) { class := "Fast!"; db.Spec.StorageClassName = &class },
			want:   &composite.InvalidError{Field: "spec.storageClassName", Reason: "DNS-1123 subdomain"},
		},
		"StorageOutOfRange": {
			reason: "99999999999999999999999Ei parses clamped to 2^63-1: out of range, not answered",
			mutate: func(db *dbv1.Database) { q := resource.MustParse("99999999999999999999999Ei"); db.Spec.Storage = &q },
			want:   &composite.InvalidError{Field: "spec.storage", Reason: "out of range"},
		},
		"HugeSize": {
			reason: "size is an enum: small, medium, large",
			mutate: withSize("huge"),
			want:   &composite.InvalidError{Field: "spec.size", Reason: `got "huge"`},
		},
		"EmptyImage": {
			reason: "the image is required",
			mutate: func(db *dbv1.Database) { db.Spec.Image = "  " },
			want:   &composite.InvalidError{Field: "spec.image", Reason: "required"},
		},
		"ImageWithSpace": {
			reason: "an image reference has no white space (the CRD pattern is ^\\S+$)",
			mutate: func(db *dbv1.Database) { db.Spec.Image = "postgres 17" },
			want:   &composite.InvalidError{Field: "spec.image", Reason: "without white space"},
		},
		"TimeZoneCron": {
			reason: "TZ= makes five fields, but the API server refuses a time zone in a CronJob schedule",
			mutate: withBackup("TZ=UTC 0 3 * *", 7),
			want:   &composite.InvalidError{Field: "spec.backup.schedule", Reason: "time zone"},
		},
		"SixFieldCron": {
			reason: "a cron line with seconds is not what the CronJob controller runs",
			mutate: withBackup("0 30 2 * * *", 7),
			want:   &composite.InvalidError{Field: "spec.backup.schedule", Reason: "5-field"},
		},
		"MalformedCron": {
			reason: "five fields that do not parse",
			mutate: withBackup("61 2 * * *", 7),
			want:   &composite.InvalidError{Field: "spec.backup.schedule", Reason: "malformed cron line"},
		},
		"ZeroRetention": {
			reason: "at least one dump is kept",
			mutate: withBackup("0 2 * * *", 0),
			want:   &composite.InvalidError{Field: "spec.backup.retention", Reason: "between 1 and 1000"},
		},
		"StorageBelowPreset": {
			reason: "spec.storage may not be below the size preset's storage",
			mutate: func(db *dbv1.Database) { withSize(dbv1.SizeMedium)(db); withStorage("10Gi")(db) },
			want:   &composite.InvalidError{Field: "spec.storage", Reason: "must not be smaller than the medium preset's 20Gi"},
		},
		"UnknownDeletionPolicy": {
			reason: "deletionPolicy is an enum",
			mutate: withPolicy("Keep"),
			want:   &composite.InvalidError{Field: "spec.deletionPolicy", Reason: `got "Keep"`},
		},
		"NoEngine": {
			reason: "an engine object with no member names no engine",
			mutate: func(db *dbv1.Database) { db.Spec.Engine = &dbv1.DatabaseEngine{} },
			want:   &composite.InvalidError{Field: "spec.engine", Reason: "exactly one engine"},
		},
		"RestoreFromPath": {
			reason: "a backup name is a file name, never a path",
			mutate: withRestore(testName, "../../etc/passwd.dump"),
			want:   &composite.InvalidError{Field: "spec.restoreFrom.backup", Reason: "dump file name"},
		},
		"RestoreFromBadName": {
			reason: "the source must be a Database name",
			mutate: withRestore("Orders_DB", "latest"),
			want:   &composite.InvalidError{Field: "spec.restoreFrom.database", Reason: "must name a Database"},
		},
		"EmptyBackupRequest": {
			reason: "an empty backup request names no run: its Job would be that of every empty value",
			mutate: withBackupRequest(" "),
			want:   &composite.InvalidError{Field: "metadata.annotations[example.com/backup-request]", Reason: "must not be empty"},
		},
		"NameTooLong": {
			reason: "CronJob <name>-backup is limited to 52 characters",
			mutate: func(db *dbv1.Database) { db.Name = strings.Repeat("a", 46) },
			want:   &composite.InvalidError{Field: "metadata.name", Reason: "at most 45"},
		},
		"WrongTypeInSpec": {
			reason: "a decode error names the field",
			mutate: nil,
			want:   &composite.InvalidError{Field: "spec.size", Reason: "wrong type"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := newRequest(t, newDatabase(), false)
			if tc.mutate != nil {
				req = newRequest(t, newDatabase(tc.mutate), false)
			} else {
				req.Parent = []byte(strings.Replace(string(req.Parent), `"size":"small"`, `"size":3`, 1))
			}
			hook, _ := Hook(testKey, testAgentImage)
			_, err := hook(req, testNow)
			var got *composite.InvalidError
			if !errors.As(err, &got) {
				t.Fatalf("%s\nSync(...): want *composite.InvalidError, got %T %v", tc.reason, err, err)
			}
			if diff := cmp.Diff(tc.want.Field, got.Field); diff != "" {
				t.Errorf("%s\nSync(...): field -want +got:\n%s", tc.reason, diff)
			}
			if !strings.Contains(got.Reason, tc.want.Reason) {
				t.Errorf("%s\nSync(...): reason %q does not contain %q", tc.reason, got.Reason, tc.want.Reason)
			}
		})
	}
}

func TestSyncRejectsOtherKinds(t *testing.T) {
	req := newRequest(t, newDatabase(func(db *dbv1.Database) { db.Kind = "MyApp"; db.APIVersion = "example.com/v1alpha1" }), false)
	_, err := mustHook(t)(req, testNow)
	var requestErr *composite.RequestError
	if !errors.As(err, &requestErr) {
		t.Fatalf("a MyApp posted to the Database hook must be a *composite.RequestError (400), got %T %v", err, err)
	}
}

func TestHookRejectsShortKeys(t *testing.T) {
	cases := map[string]struct {
		reason  string
		key     []byte
		wantErr bool
	}{
		"Nil":      {reason: "no key at all", key: nil, wantErr: true},
		"31Bytes":  {reason: "one byte short of the minimum", key: []byte(strings.Repeat("k", 31)), wantErr: true},
		"32Bytes":  {reason: "the minimum", key: []byte(strings.Repeat("k", 32)), wantErr: false},
		"64Bytes":  {reason: "longer keys are fine", key: []byte(strings.Repeat("k", 64)), wantErr: false},
		"TestsKey": {reason: "the key of these tests", key: testKey, wantErr: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			hook, err := Hook(tc.key, testAgentImage)
			if got := err != nil; got != tc.wantErr {
				t.Fatalf("%s\nHook(%d bytes): error %v, want error %v", tc.reason, len(tc.key), err, tc.wantErr)
			}
			if (hook == nil) != tc.wantErr {
				t.Errorf("%s\nHook(%d bytes): a hook must come back exactly when there is no error", tc.reason, len(tc.key))
			}
		})
	}
}

func TestUnconfiguredFailsWithoutChildren(t *testing.T) {
	resp, err := Unconfigured(newRequest(t, newDatabase(), false), testNow)
	if !errors.Is(err, ErrNoKey) || resp != nil {
		t.Fatalf("Unconfigured must answer no response and ErrNoKey (a 500, children untouched), got %v, %v", resp, err)
	}
}

func mustHook(t *testing.T) composite.SyncFunc {
	t.Helper()
	hook, err := Hook(testKey, testAgentImage)
	if err != nil {
		t.Fatal(err)
	}
	return hook
}

// TestHookAgentImage: a Database with instances >= 2 needs the reporter's
// image; without one the hook answers ErrNoAgentImage (a 500: every child
// left as it is), and a single server never needs it.
func TestHookAgentImage(t *testing.T) {
	if _, err := Hook(testKey, "registry.example/metahooks:v1 --evil"); err == nil {
		t.Error("Hook accepted an image with white space")
	}
	noImage, err := Hook(testKey, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, reason string
		instances    int32
		wantErr      error
	}{
		{"Single", "one server has no reporter", 1, nil},
		{"HA", "instances >= 2 cannot be rendered without the reporter", 3, ErrNoAgentImage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := noImage(newRequest(t, newDatabase(withInstances(tc.instances)), false), testNow)
			if !errors.Is(err, tc.wantErr) || (err == nil) != (resp != nil) {
				t.Errorf("%s\nSync without an agent image: %v, %v; want error %v", tc.reason, resp != nil, err, tc.wantErr)
			}
		})
	}
}

// parseParent is parseRequestParent of a parent alone, as the tests build them.
func parseParent(raw []byte) (*database, error) {
	return parseRequestParent(&composite.Request{Parent: raw})
}

// TestSyncRefusesPastTheLimits: every string the CRD bounds is refused one
// character past its maxLength (api/v1/limits.go), the field named, and a
// 1 MB value is quoted by a short prefix; at the limit it is accepted.
func TestSyncRefusesPastTheLimits(t *testing.T) {
	long := func(n int) string { return strings.Repeat("a", n) }
	schedule := func(n int) string { // a valid line of n characters
		m := n - len(" * * * *")
		if m%2 == 1 {
			return "1" + strings.Repeat(",1", (m-1)/2) + " * * * *"
		}
		return "10" + strings.Repeat(",1", (m-2)/2) + " * * * *"
	}
	for _, tc := range []struct {
		reason string
		mutate func(*dbv1.Database)
		field  string // "" accepted
	}{
		{"an image at the limit", func(db *dbv1.Database) { db.Spec.Image = long(dbv1.MaxImageLength) }, ""},
		{"an image past it", func(db *dbv1.Database) { db.Spec.Image = long(dbv1.MaxImageLength + 1) }, "spec.image"},
		{"a 1 MB image", func(db *dbv1.Database) { db.Spec.Image = long(1 << 20) }, "spec.image"},
		{"a schedule at the limit", withBackup(schedule(kube.MaxCronLength), 7), ""},
		{"a schedule past it", withBackup(schedule(kube.MaxCronLength+1), 7), "spec.backup.schedule"},
		{"a 1 MB schedule with a time zone is refused by its length", withBackup("TZ=UTC "+long(1<<20)+" * * * *", 7), "spec.backup.schedule"},
		{"a restore backup at the limit", withRestore("orders", long(dbv1.MaxRestoreBackupLength-5)+".dump"), ""},
		{"a restore backup past it", withRestore("orders", long(dbv1.MaxRestoreBackupLength-4)+".dump"), "spec.restoreFrom.backup"},
		{"a 1 MB restore backup", withRestore("orders", long(1<<20)), "spec.restoreFrom.backup"},
		{"a primary past the limit", func(db *dbv1.Database) { db.Spec.Primary = db.Name + "-" + long(dbv1.MaxPrimaryLength) }, "spec.primary"},
		{"a backup request at the limit", withBackupRequest(long(dbv1.MaxBackupRequestLength)), ""},
		{"a backup request past it", withBackupRequest(long(dbv1.MaxBackupRequestLength + 1)), "metadata.annotations[" + backupRequestAnnotation + "]"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			hook, _ := Hook(testKey, testAgentImage)
			_, err := hook(newRequest(t, newDatabase(tc.mutate), false), testNow)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Sync: %.300v", err)
				}
				return
			}
			var got *composite.InvalidError
			if !errors.As(err, &got) || got.Field != tc.field {
				t.Fatalf("Sync: %.300v, want an InvalidError of %s", err, tc.field)
			}
			if !strings.Contains(got.Reason, "must be at most") {
				t.Errorf("reason %.300q does not give the limit", got.Reason)
			}
			if len(err.Error()) > 512 {
				t.Errorf("error has %d bytes: %.300s", len(err.Error()), err)
			}
		})
	}
}
