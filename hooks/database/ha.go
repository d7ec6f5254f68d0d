package database

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
	"metahooks/hooks/kube"
)

// Defaults and bounds of the high-availability fields (the CRD declares the
// same bounds).
const (
	defaultInstances            = 1
	maxInstances                = 9
	defaultFailoverDelaySeconds = 30
	minFailoverDelaySeconds     = 5
	maxFailoverDelaySeconds     = 3600
)

// haSpec is the high-availability part of the spec, defaulted and validated.
type haSpec struct {
	instances     int32         // 1 to 9; 1 is a single server, exactly as before HA
	synchronous   bool          // a commit waits for one standby (default with instances >= 2)
	failoverDelay time.Duration // how long the primary may be not Ready before a failover
	preferred     string        // spec.primary: the instance that should be the primary; "" for none
}

// enabled reports whether the Database runs more than one instance: only then
// do the topology, the extra Services, the PDB and the HA status exist.
func (h haSpec) enabled() bool { return h.instances > 1 }

func parseHA(d *database, spec dbv1.DatabaseSpec) (haSpec, error) {
	h := haSpec{instances: defaultInstances, failoverDelay: defaultFailoverDelaySeconds * time.Second}
	if spec.Instances != nil {
		h.instances = *spec.Instances
	}
	if h.instances < 1 || h.instances > maxInstances {
		return haSpec{}, composite.Invalid("spec.instances", "must be between 1 and %d, got %d", maxInstances, h.instances)
	}
	h.synchronous = true
	if spec.Replication != nil && spec.Replication.Synchronous != nil {
		h.synchronous = *spec.Replication.Synchronous
	}
	if spec.FailoverDelaySeconds != nil {
		s := *spec.FailoverDelaySeconds
		if s < minFailoverDelaySeconds || s > maxFailoverDelaySeconds {
			return haSpec{}, composite.Invalid("spec.failoverDelaySeconds", "must be between %d and %d, got %d", minFailoverDelaySeconds, maxFailoverDelaySeconds, s)
		}
		h.failoverDelay = time.Duration(s) * time.Second
	}
	if p := spec.Primary; p != "" {
		if err := kube.ValidateLength(p, dbv1.MaxPrimaryLength); err != nil {
			return haSpec{}, composite.Invalid("spec.primary", "%v", err)
		}
		ordinal, ok := d.instanceOrdinal(p)
		if !ok || ordinal >= int(h.instances) {
			return haSpec{}, composite.Invalid("spec.primary", "must name an instance %s-<ordinal> with ordinal below spec.instances (%d), got %s", d.name, h.instances, composite.Quote(p))
		}
		h.preferred = p
	}
	return h, nil
}

// instanceName is the pod of the given ordinal: <name>-<ordinal>.
func (d *database) instanceName(ordinal int) string { return kube.PodName(d.name, ordinal) }

// instanceOrdinal parses <name>-<ordinal>; false for any other name.
func (d *database) instanceOrdinal(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, d.name+"-")
	if !ok || rest == "" || (len(rest) > 1 && rest[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n >= maxInstances {
		return 0, false
	}
	return n, true
}

// synchronousStandbyNames is the value of PostgreSQL's
// synchronous_standby_names on a primary with these standbys: a commit waits
// until any one of them has flushed it. "" when asynchronous or without
// standbys.
func synchronousStandbyNames(h haSpec, standbys []string) string {
	if !h.synchronous || len(standbys) == 0 {
		return ""
	}
	quoted := make([]string, len(standbys))
	for i, s := range standbys {
		quoted[i] = strconv.Quote(s)
	}
	return fmt.Sprintf("ANY 1 (%s)", strings.Join(quoted, ", "))
}
