package database

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"metahooks/hooks/composite"
)

// ErrNoKey is what Unconfigured answers: the service has no credentials key.
var ErrNoKey = errors.New("the Database hook has no credentials key: start metahooks with one")

// ErrNoAgentImage is the answer for a Database with instances >= 2 when the
// service was not told its own image (--instance-agent-image): its pods
// need the reporter container, and without it no failover could ever be
// decided. A 500 leaves every child as it is.
var ErrNoAgentImage = errors.New("the Database hook has no instance agent image: start metahooks with --instance-agent-image for spec.instances >= 2")

// settings are the service's own inputs to the hook, the same on every
// replica: the credentials key and the image of the reporter container.
type settings struct {
	key        []byte
	agentImage string
}

// Hook returns the Database hook with the credentials key the passwords are
// derived from, and agentImage, the image of metahooks itself that the
// reporter container of every instance runs (instances >= 2; "" answers
// ErrNoAgentImage for those). Every replica of the service must be given
// the same key, and it must stay the same: it is the only input of new
// passwords that is not in the request. Keys shorter than MinKeyLength bytes
// are rejected. A new agentImage rolls every Database with instances >= 2.
func Hook(key []byte, agentImage string) (composite.SyncFunc, error) {
	if len(key) < MinKeyLength {
		return nil, fmt.Errorf("credentials key must be at least %d bytes, got %d", MinKeyLength, len(key))
	}
	if strings.ContainsAny(agentImage, " \t\r\n") {
		return nil, fmt.Errorf("instance agent image %q has white space", agentImage)
	}
	s := settings{key: bytes.Clone(key), agentImage: agentImage}
	return func(req *composite.Request, now time.Time) (*composite.Response, error) {
		return sync(req, s, now)
	}, nil
}

// Unconfigured answers every call with ErrNoKey (a 500), so Metacontroller
// leaves the children and the status alone until the service has a key.
func Unconfigured(*composite.Request, time.Time) (*composite.Response, error) {
	return nil, ErrNoKey
}

// sync answers a sync or finalize call for a Database parent: the desired
// children and the parent's status. It is pure: the same request, key and now
// give the same response, and now only matters for a condition whose status
// changes.
func sync(req *composite.Request, s settings, now time.Time) (*composite.Response, error) {
	d, err := parseRequestParent(req)
	if err != nil {
		return nil, err
	}
	if d.ha.enabled() && s.agentImage == "" {
		return nil, ErrNoAgentImage
	}
	o, err := observeChildren(req, d)
	if err != nil {
		return nil, err
	}
	t, err := planInstances(req, d, o, restoring(d, o.statefulSet), s.agentImage, now)
	if err != nil {
		return nil, err
	}
	if req.Finalizing {
		return finalize(d, o, t, s, now)
	}
	p := plan{replicas: 1, restoring: restoring(d, o.statefulSet), restoreFailure: o.restoreFailure}
	if d.hibernate {
		p.replicas = 0
	}
	sts := desiredStatefulSet(d, o, s, p, t)
	response, err := composite.NewResponse(status(d, o, p, t, &sts.Spec.Template, now), append(desiredChildren(d, o, s, p, t, sts, d.hibernate), onDemandBackupJob(d, t.backupHost(d)))...)
	if err != nil {
		return nil, fmt.Errorf("cannot build Database %s/%s: %w", d.namespace, d.name, err)
	}
	response.ResyncAfterSeconds = t.resync()
	return response, nil
}

// planInstances decides the topology of a Database with instances >= 2 from
// the observed record, pods and StatefulSet; nil for a single server, whose
// answer has none of it.
func planInstances(req *composite.Request, d *database, o *observed, restoring bool, agentImage string, now time.Time) (*topology, error) {
	if !d.ha.enabled() {
		return nil, nil
	}
	rec, err := observeRecord(d, o.topology)
	if err != nil {
		return nil, err
	}
	insts, err := observeInstances(req, d, o.statefulSet, instanceCount(d, rec))
	if err != nil {
		return nil, err
	}
	hash := addInstances(d, o, statefulSet(d, o, 1, restoring), agentImage)
	t := decideTopology(d, o.statefulSet, rec, insts, hash, now)
	return &t, nil
}
