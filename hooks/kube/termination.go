package kube

import (
	"fmt"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxSaid bounds what a status repeats of a container's words, in bytes.
const MaxSaid = 300

// Failure is how a container that failed and is not running again ended.
type Failure struct {
	// Said is the last line of its termination message (with a marker, what
	// follows the marker on the last line holding it), at most MaxSaid bytes;
	// without one, its exit code and reason.
	Said string
	// FinishedAt is when it ended.
	FinishedAt metav1.Time
}

// ContainerFailure reads a container status: the failure of a container that
// terminated with a non-zero exit code (now, or last time while it waits to
// restart), and false for any other. Containers with
// terminationMessagePolicy FallbackToLogsOnError have the tail of their log
// as termination message. Nothing else of the status is kept.
func ContainerFailure(st corev1.ContainerStatus, marker string) (Failure, bool) {
	term := st.State.Terminated
	if term == nil && st.State.Waiting != nil {
		term = st.LastTerminationState.Terminated
	}
	if term == nil || term.ExitCode == 0 {
		return Failure{}, false
	}
	said := ""
	lines := strings.Split(strings.TrimSpace(term.Message), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if marker == "" {
			said = lines[i]
			break
		}
		if _, after, found := strings.Cut(lines[i], marker); found {
			said = after
			break
		}
	}
	said = strings.TrimSpace(strings.ToValidUTF8(said, "?"))
	if said == "" {
		said = fmt.Sprintf("exited %d (%s)", term.ExitCode, term.Reason)
	}
	if len(said) > MaxSaid {
		cut := MaxSaid
		for cut > 0 && !utf8.RuneStart(said[cut]) {
			cut--
		}
		said = said[:cut] + "..."
	}
	return Failure{Said: said, FinishedAt: term.FinishedAt}, true
}
