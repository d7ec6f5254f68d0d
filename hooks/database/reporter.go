package database

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"metahooks/hooks/kube"
)

// The reporter container (instances >= 2) runs `metahooks instance-report`
// from the service's own image: it publishes the report that
// scripts/instance.sh writes into the report emptyDir on the pod
// (package instancereport). It alone gets an API token: a projected one of
// ServiceAccount <name>-instance, where the kubelet would mount the default
// one, so the PostgreSQL containers have none.
const (
	reporterName        = "reporter"
	reportVolume        = "report" // emptyDir: the report file, written by the server container
	reportMountPath     = "/run/metahooks-report"
	reporterTokenVolume = "instance-token"
	reporterTokenPath   = "/var/run/secrets/kubernetes.io/serviceaccount"
	reporterTokenTTL    = 3600 // seconds; the kubelet renews it at 80 %
)

// ReportFile is where an instance's server container writes its report
// and its reporter container reads it (instance-report --report-file).
const ReportFile = reportMountPath + "/report"

// TopologySwitchoverFile is the file of the mounted record that is set while
// a planned switchover is under way (the record's switchoverTo).
const TopologySwitchoverFile = topologySwitchoverKey

// addReporter gives the pod the reporter container, the report volume (the
// server container writes it, REPORT_DIR) and the token volume.
func addReporter(d *database, pod *corev1.PodSpec, image string) {
	pod.ServiceAccountName = d.instanceAccountName()
	pod.AutomountServiceAccountToken = ptr.To(false)
	pod.Volumes = append(pod.Volumes,
		corev1.Volume{Name: reportVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{
			Medium: corev1.StorageMediumMemory, SizeLimit: ptr.To(resource.MustParse("1Mi")),
		}}},
		corev1.Volume{Name: reporterTokenVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
			Sources: []corev1.VolumeProjection{
				{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](reporterTokenTTL)}},
				{ConfigMap: &corev1.ConfigMapProjection{
					LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
					Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
				}},
			},
		}}},
	)
	for i := range pod.Containers {
		if c := &pod.Containers[i]; c.Name == containerName {
			c.Env = append(c.Env, corev1.EnvVar{Name: "REPORT_DIR", Value: reportMountPath})
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: reportVolume, MountPath: reportMountPath})
		}
	}
	pod.Containers = append(pod.Containers, corev1.Container{
		Name:  reporterName,
		Image: image,
		Args: []string{"instance-report", "--pod=$(POD_NAME)", "--namespace=$(POD_NAMESPACE)",
			"--report-file=" + ReportFile, "--topology-dir=" + topologyMountPath},
		Env: []corev1.EnvVar{
			kube.FieldEnv("POD_NAME", "metadata.name"),
			kube.FieldEnv("POD_NAMESPACE", "metadata.namespace"),
			// As the service's Deployment: the Go runtime collects harder
			// before the container's limit is hit. The divisor as the API
			// server defaults it, so the observed env equals the answer's.
			{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1")}}},
		},
		// It polls a file once a second and patches now and then: 19.0-19.5
		// MB peak resident in TestDatabaseInstanceReports (docs/database.md).
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("24Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("48Mi")},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: reportVolume, MountPath: reportMountPath, ReadOnly: true},
			{Name: topologyVolume, MountPath: topologyMountPath, ReadOnly: true},
			{Name: reporterTokenVolume, MountPath: reporterTokenPath, ReadOnly: true},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			ReadOnlyRootFilesystem:   ptr.To(true),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	})
}
