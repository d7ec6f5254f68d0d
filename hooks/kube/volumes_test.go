package kube

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// TestClaimTemplate compares with a volumeClaimTemplate as the API server
// returns it: any field missing here would be an update on every sync.
func TestClaimTemplate(t *testing.T) {
	cases := map[string]struct {
		reason       string
		storageClass *string
		want         string
	}{
		"DefaultClass": {
			reason: "no class: the cluster's default, no storageClassName",
			want:   `{"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"5Gi"}},"volumeMode":"Filesystem"},"status":{"phase":"Pending"}}`,
		},
		"Class": {
			reason:       "a named class",
			storageClass: ptr.To("fast"),
			want:         `{"kind":"PersistentVolumeClaim","apiVersion":"v1","metadata":{"name":"data"},"spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"5Gi"}},"storageClassName":"fast","volumeMode":"Filesystem"},"status":{"phase":"Pending"}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raw, err := json.Marshal(ClaimTemplate("data", resource.MustParse("5Gi"), tc.storageClass))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(raw)); diff != "" {
				t.Errorf("%s\nClaimTemplate: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}

func TestClaimName(t *testing.T) {
	if diff := cmp.Diff("backups-orders-0", ClaimName("backups", "orders", 0)); diff != "" {
		t.Errorf("ClaimName: -want +got:\n%s", diff)
	}
	if diff := cmp.Diff("demo-2", PodName("demo", 2)); diff != "" {
		t.Errorf("PodName: -want +got:\n%s", diff)
	}
}

func TestClaimVolume(t *testing.T) {
	cases := map[string]struct {
		reason   string
		readOnly bool
		want     string
	}{
		"ReadOnly":  {reason: "a backup reads the data volume", readOnly: true, want: `{"name":"data","persistentVolumeClaim":{"claimName":"data-demo-0","readOnly":true}}`},
		"ReadWrite": {reason: "a backup writes the backups volume", want: `{"name":"data","persistentVolumeClaim":{"claimName":"data-demo-0"}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raw, err := json.Marshal(ClaimVolume("data", "data-demo-0", tc.readOnly))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(raw)); diff != "" {
				t.Errorf("%s\nClaimVolume: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
