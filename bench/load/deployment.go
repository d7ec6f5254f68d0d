package load

import (
	"fmt"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// DeploymentMemoryLimit is limits.memory of the first container of the
// Deployment at path (deploy/deployment.yaml): the GOMEMLIMIT the server runs
// with in a cluster, so benchmarks run it the same way.
func DeploymentMemoryLimit(path string) (int64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	var d appsv1.Deployment
	if err := yaml.Unmarshal(raw, &d); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return 0, fmt.Errorf("%s: no container", path)
	}
	memory := d.Spec.Template.Spec.Containers[0].Resources.Limits.Memory()
	if memory.IsZero() {
		return 0, fmt.Errorf("%s: no limits.memory", path)
	}
	return memory.Value(), nil
}
