package database

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestReporterContainer: at instances >= 2 the pod runs the reporter with
// the service's image, and it alone holds an API token; the server writes
// its report where the reporter reads it, and the reporter sees nothing
// else of the pod (no socket, no passfile, no data).
func TestReporterContainer(t *testing.T) {
	sts := desired[appsv1.StatefulSet](t, newDatabase(withInstances(3)), "StatefulSet", testName)
	pod := sts.Spec.Template.Spec
	if pod.ServiceAccountName != testName+"-instance" || pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Errorf("pod serviceAccountName %q, automountServiceAccountToken %v; want %s-instance and false", pod.ServiceAccountName, pod.AutomountServiceAccountToken, testName)
	}
	mounts := map[string][]string{} // container -> volume:path(:ro)
	for _, list := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		for _, c := range list {
			for _, m := range c.VolumeMounts {
				entry := m.Name + ":" + m.MountPath
				if m.ReadOnly {
					entry += ":ro"
				}
				mounts[c.Name] = append(mounts[c.Name], entry)
			}
		}
	}
	wantReporter := []string{"report:/run/metahooks-report:ro", "topology:/etc/topology:ro", "instance-token:/var/run/secrets/kubernetes.io/serviceaccount:ro"}
	if diff := cmp.Diff(wantReporter, mounts[reporterName]); diff != "" {
		t.Errorf("reporter mounts (-want +got):\n%s", diff)
	}
	for name, ms := range mounts {
		for _, m := range ms {
			if name != reporterName && (m == "instance-token:/var/run/secrets/kubernetes.io/serviceaccount:ro") {
				t.Errorf("container %s mounts the API token", name)
			}
		}
	}
	var reporter, server *corev1.Container
	for i := range pod.Containers {
		switch pod.Containers[i].Name {
		case reporterName:
			reporter = &pod.Containers[i]
		case containerName:
			server = &pod.Containers[i]
		}
	}
	if reporter == nil || server == nil {
		t.Fatalf("containers %v; want postgres and reporter", pod.Containers)
	}
	if reporter.Image != testAgentImage || reporter.Args[0] != "instance-report" {
		t.Errorf("reporter image %q args %v; want %s running instance-report", reporter.Image, reporter.Args, testAgentImage)
	}
	if !hasEnv(server, "REPORT_DIR", reportMountPath) || !slices.Contains(mounts[containerName], "report:"+reportMountPath) {
		t.Errorf("the server container must write its report to %s (REPORT_DIR and a writable mount): env %v, mounts %v", reportMountPath, server.Env, mounts[containerName])
	}

	// A new agent image is a new template: the instances roll, primary last.
	other, err := Hook(testKey, "registry.example/metahooks:next")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := other(newRequest(t, newDatabase(withInstances(3)), false), testNow)
	if err != nil {
		t.Fatal(err)
	}
	next := responseChild[appsv1.StatefulSet](t, resp, "StatefulSet", testName)
	if next.Spec.Template.Annotations[templateHashKey] == sts.Spec.Template.Annotations[templateHashKey] {
		t.Error("another agent image kept the template hash: the rolling update would not see it")
	}

	single := desired[appsv1.StatefulSet](t, newDatabase(), "StatefulSet", testName)
	if n := len(single.Spec.Template.Spec.Containers); n != 1 || single.Spec.Template.Spec.ServiceAccountName != "" {
		t.Errorf("a single server has %d containers and serviceAccountName %q; want 1 and none", n, single.Spec.Template.Spec.ServiceAccountName)
	}
}

func hasEnv(c *corev1.Container, name, value string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.Value == value {
			return true
		}
	}
	return false
}
