package load

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDeploymentMemoryLimit(t *testing.T) {
	cases := map[string]struct {
		reason  string
		yaml    string
		want    int64
		wantErr bool
	}{
		"Limit": {reason: "limits.memory of the first container", want: 128 << 20,
			yaml: "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n        resources: {limits: {memory: 128Mi}}\n      - name: b\n        resources: {limits: {memory: 1Gi}}\n"},
		"NoLimit":     {reason: "a container without limits.memory is an error", wantErr: true, yaml: "apiVersion: apps/v1\nkind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n"},
		"NoContainer": {reason: "no container is an error", wantErr: true, yaml: "apiVersion: apps/v1\nkind: Deployment\n"},
	}
	for name, tc := range cases {
		path := filepath.Join(t.TempDir(), "d.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := DeploymentMemoryLimit(path)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("%s (%s): DeploymentMemoryLimit = %d, %v; want %d, error %v", name, tc.reason, got, err, tc.want, tc.wantErr)
		}
	}
}
