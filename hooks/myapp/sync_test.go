package myapp

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"

	"metahooks/hooks/composite"
)

func TestSyncChildren(t *testing.T) {
	backup := map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"command": []string{"/bin/backup"}}}
	cases := map[string]struct {
		reason string
		spec   map[string]any
		want   []string
	}{
		"Minimal": {
			reason: "every MyApp has a StatefulSet, a headless Service and a ConfigMap",
			spec:   baseSpec(),
			want:   []string{"StatefulSet/demo", "ConfigMap/demo-config", "Service/demo"},
		},
		"HighAvailability": {
			reason: "highAvailability adds a PodDisruptionBudget",
			spec:   withSpec(map[string]any{"highAvailability": true}),
			want:   []string{"StatefulSet/demo", "PodDisruptionBudget/demo", "ConfigMap/demo-config", "Service/demo"},
		},
		"Backup": {
			reason: "a backup schedule adds the CronJob",
			spec:   withSpec(backup),
			want:   []string{"StatefulSet/demo", "CronJob/demo-backup", "ConfigMap/demo-config", "Service/demo"},
		},
		"DefaultBackup": {
			reason: "a schedule alone: one archive CronJob per replica",
			spec:   withSpec(map[string]any{"backupSchedule": "0 2 * * *"}),
			want:   []string{"StatefulSet/demo", "CronJob/demo-backup-0", "CronJob/demo-backup-1", "ConfigMap/demo-config", "Service/demo"},
		},
		"Restore": {
			reason: "restoreFrom alone adds no child: the StatefulSet carries the restore",
			spec:   withSpec(map[string]any{"restoreFrom": "latest"}),
			want:   []string{"StatefulSet/demo", "ConfigMap/demo-config", "Service/demo"},
		},
		"Everything": {
			reason: "both optional children together",
			spec:   withSpec(map[string]any{"highAvailability": true, "backupSchedule": "0 2 * * *", "backup": map[string]any{"command": []string{"/bin/backup"}}}),
			want:   []string{"StatefulSet/demo", "CronJob/demo-backup", "PodDisruptionBudget/demo", "ConfigMap/demo-config", "Service/demo"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			response, err := Sync(request(t, tc.spec, nil, nil), testNow)
			if err != nil {
				t.Fatalf("%s\nSync(...): %v", tc.reason, err)
			}
			if diff := cmp.Diff(tc.want, childNames(t, response)); diff != "" {
				t.Errorf("%s\nSync(...) children: -want +got:\n%s", tc.reason, diff)
			}
			if response.Finalized || response.ResyncAfterSeconds != 0 {
				t.Errorf("%s\nSync(...) = finalized %v resync %v; a sync call never finalizes or waits", tc.reason, response.Finalized, response.ResyncAfterSeconds)
			}
		})
	}
}

func TestFinalize(t *testing.T) {
	spec := withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"command": []string{"/bin/backup"}}})
	first, err := Sync(request(t, spec, nil, nil), testNow)
	if err != nil {
		t.Fatal(err)
	}
	running := observedFrom(t, first, appsv1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2})
	scaledDown := running.DeepCopy()
	scaledDown.Spec.Replicas = new(int32)
	scaledDown.Status = appsv1.StatefulSetStatus{ObservedGeneration: 1}
	stale := scaledDown.DeepCopy()
	stale.Generation = 2 // controller has not seen the scale-down yet

	cases := map[string]struct {
		reason        string
		observed      *appsv1.StatefulSet
		wantFinalized bool
		wantReplicas  int32 // of the desired StatefulSet, when not finalized
		wantChildren  int
	}{
		"Running": {reason: "pods are running: scale to 0 and wait", observed: running, wantReplicas: 0, wantChildren: 4},
		"Stale":   {reason: "0 pods reported for an older generation proves nothing", observed: stale, wantReplicas: 0, wantChildren: 4},
		"Scaled":  {reason: "no pods left: done, and nothing more to apply", observed: scaledDown, wantFinalized: true},
		"NoSTS":   {reason: "never created or already gone: done", observed: nil, wantFinalized: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := request(t, spec, nil, tc.observed)
			req.Finalizing = true
			response, err := Sync(req, testNow)
			if err != nil {
				t.Fatalf("%s\nSync(finalizing): %v", tc.reason, err)
			}
			if response.Finalized != tc.wantFinalized {
				t.Errorf("%s\nfinalized = %v, want %v", tc.reason, response.Finalized, tc.wantFinalized)
			}
			if tc.wantFinalized {
				if len(response.Children) != 0 || response.ResyncAfterSeconds != 0 {
					t.Errorf("%s\nfinalized answer has %d children and resync %v, want none", tc.reason, len(response.Children), response.ResyncAfterSeconds)
				}
				return
			}
			if response.ResyncAfterSeconds <= 0 {
				t.Errorf("%s\nwaiting answer without resyncAfterSeconds", tc.reason)
			}
			if len(response.Children) != tc.wantChildren {
				t.Errorf("%s\n%d children, want %d: %v", tc.reason, len(response.Children), tc.wantChildren, childNames(t, response))
			}
			for _, child := range response.Children {
				var obj struct {
					Spec struct {
						Replicas *int32 `json:"replicas"`
						Suspend  *bool  `json:"suspend"`
					} `json:"spec"`
				}
				if err := json.Unmarshal(child.JSON, &obj); err != nil {
					t.Fatal(err)
				}
				switch child.Kind {
				case "StatefulSet":
					if obj.Spec.Replicas == nil || *obj.Spec.Replicas != tc.wantReplicas {
						t.Errorf("%s\nStatefulSet replicas = %v, want %d", tc.reason, obj.Spec.Replicas, tc.wantReplicas)
					}
				case "CronJob":
					if obj.Spec.Suspend == nil || !*obj.Spec.Suspend {
						t.Errorf("%s\nbackup CronJob not suspended while finalizing", tc.reason)
					}
				}
			}
		})
	}
}

func TestSyncNeverFinalizes(t *testing.T) {
	// A parent being deleted without a finalize hook (foreground deletion) still
	// gets sync calls with finalizing false; they must not answer finalized.
	req := request(t, baseSpec(), nil, nil)
	req.Parent = bytes.Replace(req.Parent, []byte(`"generation":3`), []byte(`"generation":3,"deletionTimestamp":"2026-11-30T04:09:04Z"`), 1)
	response, err := Sync(req, testNow)
	if err != nil {
		t.Fatal(err)
	}
	if response.Finalized {
		t.Error("Sync answered finalized: true on a sync call")
	}
	if len(response.Children) != 3 {
		t.Errorf("Sync dropped children of a parent being deleted: %v", childNames(t, response))
	}
}

// TestFixedPoint: once the observed children match and the parent's status holds
// the answer, the next call returns the same status (whatever the time) and the
// same children, so Metacontroller writes nothing and no hot loop starts.
func TestFixedPoint(t *testing.T) {
	spec := withSpec(map[string]any{"highAvailability": true, "config": map[string]any{"LOG_LEVEL": "debug"}})
	first, err := Sync(request(t, spec, nil, nil), testNow)
	if err != nil {
		t.Fatal(err)
	}
	observed := observedFrom(t, first, appsv1.StatefulSetStatus{
		Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2, UpdatedReplicas: 2, CurrentReplicas: 2,
		CurrentRevision: "demo-1", UpdateRevision: "demo-1",
	})
	second, err := Sync(request(t, spec, nil, observed), testNow)
	if err != nil {
		t.Fatal(err)
	}
	var status map[string]any
	if err := json.Unmarshal(second.Status, &status); err != nil {
		t.Fatal(err)
	}
	third, err := Sync(request(t, spec, status, observed), testNow.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(second.Status), string(third.Status)); diff != "" {
		t.Errorf("status changed on an idle sync an hour later (a hot loop): -want +got:\n%s", diff)
	}
	if diff := cmp.Diff(first.Children, third.Children); diff != "" {
		t.Errorf("children changed although nothing in the spec did: -want +got:\n%s", diff)
	}
	if !bytes.Contains(third.Status, []byte(`"reason":"AllReplicasAvailable","status":"True","type":"Ready"`)) {
		t.Errorf("steady state is not Ready: %s", third.Status)
	}
}

func TestDeterministic(t *testing.T) {
	spec := withSpec(map[string]any{
		"highAvailability": true,
		"config":           map[string]any{"z": "1", "a": "2", "m": "3"},
		"resources":        map[string]any{"requests": map[string]any{"cpu": "1000m", "memory": "1024Mi"}},
		"backupSchedule":   "0 2 * * *", "backup": map[string]any{"command": []string{"/bin/backup"}},
	})
	var first []byte
	for i := range 20 {
		response, err := Sync(request(t, spec, nil, nil), testNow)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(response)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = raw
			continue
		}
		if !bytes.Equal(first, raw) {
			t.Fatalf("call %d answered differently:\n%s\nvs\n%s", i, first, raw)
		}
	}
	if !bytes.Contains(first, []byte(`"cpu":"1","memory":"1Gi"`)) {
		t.Errorf("quantities are not canonical (1000m should be 1, 1024Mi should be 1Gi): %s", first)
	}
}

func TestSyncBadObservedChild(t *testing.T) {
	req := request(t, baseSpec(), nil, nil)
	req.Children["StatefulSet.apps/v1"]["demo"] = json.RawMessage(`{"spec":{"replicas":"two"}}`)
	_, err := Sync(req, testNow)
	if _, ok := err.(*composite.RequestError); !ok {
		t.Fatalf("Sync(observed StatefulSet with replicas \"two\") = %v, want *composite.RequestError", err)
	}
}

// BenchmarkSync is one sync of the example MyApp (five children) with its
// StatefulSet observed: decode, build, encode, as the HTTP hook runs it.
func BenchmarkSync(b *testing.B) {
	t := &testing.T{}
	spec := withSpec(map[string]any{
		"highAvailability": true, "config": map[string]any{"LOG_LEVEL": "info"},
		"backupSchedule": "0 2 * * *", "backup": map[string]any{"command": []string{"/bin/backup"}},
	})
	first, err := Sync(request(t, spec, nil, nil), testNow)
	if err != nil {
		b.Fatal(err)
	}
	req := request(t, spec, nil, observedFrom(t, first, appsv1.StatefulSetStatus{Replicas: 2, ReadyReplicas: 2, AvailableReplicas: 2}))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Sync(req, testNow); err != nil {
			b.Fatal(err)
		}
	}
}
