package v1alpha1

// The most characters (items, entries) of each string, list and map field of
// a MyApp: the CRD's maxLength, maxItems and maxProperties (the markers in
// myapp_types.go) and what the hook checks before it uses a value.
// TestCRDLimits holds the markers, the generated CRD and these constants to
// one another, and fails for a string, list or map without a limit; the
// schedule's is kube.MaxCronLength. The
// table with the reason for each is in README.md, MyApp, Field limits.
const (
	// MaxImageLength bounds spec.image and spec.backup.image: Kubernetes
	// sets no limit on a container image; registries' are far shorter.
	MaxImageLength = 1024
	// MaxRestoreFromLength: "latest" or a backup name, 20261201T020000Z.
	MaxRestoreFromLength = 16
	// MaxMountPathLength: PATH_MAX.
	MaxMountPathLength = 4096
	// MaxStorageClassNameLength: a StorageClass name, a DNS-1123 subdomain.
	MaxStorageClassNameLength = 253
	// MaxBackupCommandItems and MaxBackupCommandItemLength bound
	// spec.backup.command, a container's command.
	MaxBackupCommandItems      = 256
	MaxBackupCommandItemLength = 32768
	// MaxConfigEntries bounds spec.config: each entry is a key of the
	// ConfigMap, a file under /etc/myapp and an environment variable. Keys
	// (at most 253 characters, ConfigMap keys) and values share the
	// ConfigMap's 1 MiB, which the hook checks (kube.ValidateConfigMapData).
	MaxConfigEntries = 1024
	// MaxResourceEntries bounds spec.resources.limits and requests: cpu,
	// memory, ephemeral-storage, hugepages and extended resources.
	MaxResourceEntries = 32

	// Status fields, written by the hook.

	// MaxSelectorLength: the pods' label selector, three labels.
	MaxSelectorLength = 1024
	// MaxBackupNameLength: a backup name, or with spec.backup.command the
	// Job that ran it (a DNS-1123 subdomain).
	MaxBackupNameLength = 253
	// MaxConditions bounds status.conditions: the hook writes at most four.
	MaxConditions = 16
)
