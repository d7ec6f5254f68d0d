package v1

// The most characters (items, for lists) of each string and list field of
// a Database: the CRD's maxLength and maxItems (the markers in
// database_types.go) and what the hook checks before it uses a value.
// TestCRDLimits holds the markers, the generated CRD and these constants to
// one another, and fails for a string or list without a limit; the
// schedule's is kube.MaxCronLength. The table
// with the reason for each is in docs/database.md, Field limits.
const (
	// MaxImageLength bounds spec.image: Kubernetes sets no limit on a
	// container image; registries' references are far shorter.
	MaxImageLength = 1024
	// MaxStorageClassNameLength: a StorageClass name, a DNS-1123 subdomain.
	MaxStorageClassNameLength = 253
	// MaxRestoreDatabaseLength: spec.restoreFrom.database names a Database,
	// whose name has at most 45 characters.
	MaxRestoreDatabaseLength = 45
	// MaxRestoreBackupLength: spec.restoreFrom.backup is a file name.
	MaxRestoreBackupLength = 255
	// MaxPrimaryLength: spec.primary is <name>-<ordinal>, 45 + 2.
	MaxPrimaryLength = 47
	// MaxBackupRequestLength bounds the value of the annotation
	// example.com/backup-request, copied into status.onDemandBackup.request.
	MaxBackupRequestLength = 256

	// Status fields, written by the hook from bounded names.

	// MaxEndpointLength: a DNS name (253) and ":5432".
	MaxEndpointLength = 259
	// MaxObjectNameLength: a Secret or Job name, a DNS-1123 subdomain.
	MaxObjectNameLength = 253
	// MaxInstanceNameLength: a pod name <name>-<ordinal>, a DNS label.
	MaxInstanceNameLength = 63
	// MaxRoleLength bounds an instance's role and a primary change's
	// reason: a word.
	MaxRoleLength = 32
	// MaxInstanceStateLength bounds an instance's state: a few words.
	MaxInstanceStateLength = 128
	// MaxMessageLength bounds a message, as metav1.Condition's.
	MaxMessageLength = 32768
	// MaxStatusInstances is the most instances: spec.instances' maximum.
	MaxStatusInstances = 9
	// MaxConditions bounds status.conditions: the hook writes at most six.
	MaxConditions = 16
)
