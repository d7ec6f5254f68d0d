package kube

// Annotations both parents write on their StatefulSets and read back.
const (
	// AnnotationDomain prefixes every annotation the hooks write: a pod
	// template annotation under it is the hooks' own (TemplateChange).
	AnnotationDomain = "example.com/"
	// ConfigHashAnnotation on a pod template holds HashStrings of the data
	// of the ConfigMap its pods read, so a change of the data rolls the pods.
	ConfigHashAnnotation = "example.com/config-hash"
	// RestoringAnnotation marks a pod template that carries a restore; its
	// value names the backup.
	RestoringAnnotation = "example.com/restore"
	// RestoredAnnotation marks a StatefulSet whose restore is over; its value
	// names the backup. From then on the restore is left out of the template.
	RestoredAnnotation = "example.com/restored-from"
)
