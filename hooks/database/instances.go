package database

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"metahooks/hooks/composite"
)

// What every instance publishes about itself on its own pod (see
// docs/database.md, "What the instances publish"): the role as a label, so
// Service <name>-ro can select the standbys, and its WAL position as
// annotations. The hook only reads them: they are how it knows, from what
// Metacontroller sends, which standby holds every acknowledged commit.
const (
	roleLabel           = "example.com/role"        // primary, standby or demoted
	timelineAnnotation  = "example.com/timeline"    // the server's timeline, decimal
	lsnAnnotation       = "example.com/lsn"         // primary: WAL flushed; standby: WAL received and flushed; demoted: its shutdown checkpoint
	receivingAnnotation = "example.com/receiving"   // standby: "true" while its WAL receiver streams
	reportedAnnotation  = "example.com/reported-at" // when the report was written, RFC 3339
	epochAnnotation     = "example.com/epoch"       // the record's epoch the instance has acted on in full

	rolePrimary = "primary"
	roleStandby = "standby"
	roleDemoted = "demoted" // a primary that shut down cleanly for a switchover
)

var podKind = corev1.SchemeGroupVersion.WithKind("Pod")

// report is what one instance last published about itself.
type report struct {
	role      string
	timeline  int64
	lsn       uint64
	receiving bool
	epoch     uint64 // 0 when absent (an instance from before epochs)
	at        time.Time
}

// after orders WAL positions: a later timeline, or the same one further on.
func (r *report) after(o *report) bool {
	if r.timeline != o.timeline {
		return r.timeline > o.timeline
	}
	return r.lsn > o.lsn
}

// instance is one ordinal of the StatefulSet as observed.
type instance struct {
	name         string
	ordinal      int
	pod          *corev1.Pod // nil when not observed
	ready        bool
	readyChanged time.Time // the Ready condition's lastTransitionTime; zero when unknown
	updated      bool      // the pod runs the StatefulSet's update revision
	report       *report   // nil when the instance has not reported (or reported nonsense)
}

// state is the instance's own account of itself, for status.instances.
func (i instance) state() string {
	r := i.report
	switch {
	case i.pod == nil:
		return "no pod"
	case r == nil:
		return "unreported"
	case r.role == roleStandby && r.receiving:
		return fmt.Sprintf("standby streaming, timeline %d", r.timeline)
	case r.role == roleStandby:
		return fmt.Sprintf("standby not streaming, timeline %d", r.timeline)
	default:
		return fmt.Sprintf("%s, timeline %d", r.role, r.timeline)
	}
}

// observeInstances reads the related pods <name>-0 to <name>-<count-1>.
func observeInstances(req *composite.Request, d *database, sts *appsv1.StatefulSet, count int) ([]instance, error) {
	out := make([]instance, count)
	for ordinal := range out {
		i := instance{name: d.instanceName(ordinal), ordinal: ordinal}
		var pod corev1.Pod
		found, err := req.ObservedRelated(podKind, d.namespace, i.name, &pod)
		if err != nil {
			return nil, err
		}
		if found && pod.DeletionTimestamp == nil {
			i.pod = &pod
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodReady {
					i.ready = c.Status == corev1.ConditionTrue
					i.readyChanged = c.LastTransitionTime.Time
				}
			}
			i.updated = sts != nil && sts.Status.UpdateRevision != "" &&
				pod.Labels[appsv1.ControllerRevisionHashLabelKey] == sts.Status.UpdateRevision
			i.report = parseReport(&pod)
		}
		out[ordinal] = i
	}
	return out, nil
}

// parseReport reads an instance's report from its pod; nil when any part is
// missing or malformed. A bad report is not the request's fault (the
// instance wrote it), so it never fails the call: it only counts as none.
func parseReport(pod *corev1.Pod) *report {
	r, err := readReport(pod.Labels, pod.Annotations)
	if err != nil {
		return nil
	}
	return r
}

// readReport reads a report from the label and annotations it is published
// as; the error names the first key whose value the hook does not accept
// (ParseInstanceReport says it to the reporter).
func readReport(labels, annotations map[string]string) (*report, error) {
	bad := func(key string) error { return fmt.Errorf("key %s has a value the hook does not accept", key) }
	role := labels[roleLabel]
	if role != rolePrimary && role != roleStandby && role != roleDemoted {
		return nil, bad(roleLabel)
	}
	timeline, err := strconv.ParseInt(annotations[timelineAnnotation], 10, 64)
	if err != nil || timeline < 1 {
		return nil, bad(timelineAnnotation)
	}
	lsn, ok := parseLSN(annotations[lsnAnnotation])
	if !ok {
		return nil, bad(lsnAnnotation)
	}
	at, err := time.Parse(time.RFC3339, annotations[reportedAnnotation])
	if err != nil {
		return nil, bad(reportedAnnotation)
	}
	var epoch uint64
	if v, ok := annotations[epochAnnotation]; ok {
		if epoch, err = strconv.ParseUint(v, 10, 64); err != nil || epoch > maxEpoch {
			return nil, bad(epochAnnotation)
		}
	}
	return &report{role: role, timeline: timeline, lsn: lsn, receiving: annotations[receivingAnnotation] == "true", epoch: epoch, at: at}, nil
}

// parseLSN reads PostgreSQL's text form of a WAL position, "16/B374D848":
// two hexadecimal 32-bit halves.
func parseLSN(s string) (uint64, bool) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok || hi == "" || lo == "" || len(hi) > 8 || len(lo) > 8 {
		return 0, false
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return h<<32 | l, true
}

// formatLSN is parseLSN's inverse.
func formatLSN(lsn uint64) string {
	return fmt.Sprintf("%X/%X", lsn>>32, lsn&0xFFFFFFFF)
}
