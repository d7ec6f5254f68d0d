package database

import (
	"fmt"
	"maps"
	"strings"
)

// PodReport is an instance's report as it goes on its pod: the role label
// and the WAL-position annotations the hook reads (parseReport). The agent
// (`metahooks instance-report`, package instancereport) publishes it; the
// hook is the one place that says what it means.
type PodReport struct {
	Labels      map[string]string
	Annotations map[string]string
}

// reportKeys are the report file's keys, in the order scripts/instance.sh
// writes them; the first is the label, the rest are annotations.
var reportKeys = []string{roleLabel, timelineAnnotation, lsnAnnotation, receivingAnnotation, epochAnnotation, reportedAnnotation}

// ParseInstanceReport reads the report file scripts/instance.sh writes
// ($REPORT_DIR/report: one key=value line per key of reportKeys). Every key
// must be there once, with a value the hook accepts; an error names the
// first key that is not.
func ParseInstanceReport(file []byte) (PodReport, error) {
	values := map[string]string{}
	for line := range strings.Lines(string(file)) {
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return PodReport{}, fmt.Errorf("report line %q has no '='", truncate(line, 40))
		}
		if _, dup := values[k]; dup {
			return PodReport{}, fmt.Errorf("report key %s is given twice", truncate(k, 40))
		}
		values[k] = v
	}
	r := PodReport{Labels: map[string]string{}, Annotations: map[string]string{}}
	for i, k := range reportKeys {
		v, ok := values[k]
		if !ok {
			return PodReport{}, fmt.Errorf("report key %s is missing", k)
		}
		delete(values, k)
		if i == 0 {
			r.Labels[k] = v
		} else {
			r.Annotations[k] = v
		}
	}
	for k := range values {
		return PodReport{}, fmt.Errorf("report key %s is not one the hook reads", truncate(k, 40))
	}
	if _, err := readReport(r.Labels, r.Annotations); err != nil {
		return PodReport{}, fmt.Errorf("report %w", err)
	}
	return r, nil
}

// SameState reports whether r and o agree on everything a failover or a
// switchover waits for at once: role, timeline, whether the standby streams
// and the record's epoch acted on. They may differ in the WAL position and
// the time written, which change all the time and need publishing only now
// and then.
func (r PodReport) SameState(o PodReport) bool {
	return r.Labels[roleLabel] == o.Labels[roleLabel] &&
		r.Annotations[timelineAnnotation] == o.Annotations[timelineAnnotation] &&
		r.Annotations[receivingAnnotation] == o.Annotations[receivingAnnotation] &&
		r.Annotations[epochAnnotation] == o.Annotations[epochAnnotation]
}

// Equal reports whether r and o publish the same label and annotations.
func (r PodReport) Equal(o PodReport) bool {
	return maps.Equal(r.Labels, o.Labels) && maps.Equal(r.Annotations, o.Annotations)
}

// truncate keeps error messages short whatever a file holds.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
