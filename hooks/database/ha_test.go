package database

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
)

func TestParseHA(t *testing.T) {
	cases := map[string]struct {
		reason string
		db     *dbv1.Database
		want   haSpec
	}{
		"Defaults":      {reason: "one instance, synchronous, 30 s", db: newDatabase(), want: haSpec{instances: 1, synchronous: true, failoverDelay: 30 * time.Second}},
		"Three":         {reason: "instances 3", db: newDatabase(withInstances(3)), want: haSpec{instances: 3, synchronous: true, failoverDelay: 30 * time.Second}},
		"Asynchronous":  {reason: "replication.synchronous false", db: newDatabase(withInstances(2), withAsync()), want: haSpec{instances: 2, failoverDelay: 30 * time.Second}},
		"Delay":         {reason: "failoverDelaySeconds 90", db: newDatabase(withInstances(2), func(db *dbv1.Database) { db.Spec.FailoverDelaySeconds = ptr.To[int32](90) }), want: haSpec{instances: 2, synchronous: true, failoverDelay: 90 * time.Second}},
		"PreferredLast": {reason: "spec.primary the last ordinal", db: newDatabase(withInstances(3), withPrimary("orders-2")), want: haSpec{instances: 3, synchronous: true, failoverDelay: 30 * time.Second, preferred: "orders-2"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d := mustParse(t, tc.db)
			if diff := cmp.Diff(tc.want, d.ha, cmp.AllowUnexported(haSpec{})); diff != "" {
				t.Errorf("%s\nparseHA: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestParseHAInvalid(t *testing.T) {
	cases := map[string]struct {
		db    *dbv1.Database
		field string
	}{
		"ZeroInstances":   {db: newDatabase(withInstances(0)), field: "spec.instances"},
		"TenInstances":    {db: newDatabase(withInstances(10)), field: "spec.instances"},
		"ShortDelay":      {db: newDatabase(withInstances(2), func(db *dbv1.Database) { db.Spec.FailoverDelaySeconds = ptr.To[int32](1) }), field: "spec.failoverDelaySeconds"},
		"PrimaryTooHigh":  {db: newDatabase(withInstances(2), withPrimary("orders-2")), field: "spec.primary"},
		"PrimaryOtherDB":  {db: newDatabase(withInstances(2), withPrimary("invoices-0")), field: "spec.primary"},
		"PrimaryLeading0": {db: newDatabase(withInstances(2), withPrimary("orders-01")), field: "spec.primary"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := parseParent(mustJSON(t, tc.db))
			if !composite.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("want a 422 naming %s, got %T %v", tc.field, err, err)
			}
		})
	}
}

func TestSynchronousStandbyNames(t *testing.T) {
	sync := haSpec{instances: 3, synchronous: true}
	if got, want := synchronousStandbyNames(sync, []string{"orders-1", "orders-2"}), `ANY 1 ("orders-1", "orders-2")`; got != want {
		t.Errorf("synchronous: got %s, want %s", got, want)
	}
	if got := synchronousStandbyNames(haSpec{instances: 3}, []string{"orders-1"}); got != "" {
		t.Errorf("asynchronous must have none, got %q", got)
	}
	if got := synchronousStandbyNames(sync, nil); got != "" {
		t.Errorf("no standby must have none (a commit would wait forever), got %q", got)
	}
}
