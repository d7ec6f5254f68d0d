package myapp

// Condition types and reasons of MyApp's status.
const (
	ConditionRestored = "Restored"

	ReasonAllReplicasAvailable = "AllReplicasAvailable"
	ReasonScaledToZero         = "ScaledToZero"
	ReasonReplicasUnavailable  = "ReplicasUnavailable"

	ReasonBackupsVolumeMissing = "BackupsVolumeMissing"
	ReasonRestoreComplete      = "RestoreComplete"
	ReasonRestoreFailed        = "RestoreFailed"
)
