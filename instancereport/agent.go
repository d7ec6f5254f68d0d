package instancereport

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"metahooks/hooks/database"
)

// switchoverKey is the record's key set while a planned switchover is under
// way (the topology ConfigMap's switchoverTo, a file of the mounted record).
const switchoverKey = "switchoverTo"

// Run publishes the report until ctx ends. It returns an error only for a
// configuration it cannot work with; everything else is logged and retried.
func Run(ctx context.Context, cfg Config) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	client, err := newPodClient(&cfg)
	if err != nil {
		return err
	}
	a := agent{cfg: &cfg, publish: client.publish}
	cfg.Logger.Info("publishing the instance report", "pod", cfg.Namespace+"/"+cfg.Pod, "file", cfg.ReportFile)
	tick := time.NewTicker(cfg.Poll)
	defer tick.Stop()
	for {
		a.step(ctx, time.Now())
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// agent is the loop's state: what was last published, and when.
type agent struct {
	cfg     *Config
	publish func(context.Context, database.PodReport) error

	published   *database.PodReport // nil until the first success
	publishedAt time.Time
	lastProblem string // logged once until it changes
}

// step reads the file once and publishes it when due.
func (a *agent) step(ctx context.Context, now time.Time) {
	raw, err := os.ReadFile(a.cfg.ReportFile)
	if errors.Is(err, fs.ErrNotExist) {
		a.problem("no report yet (the server has not started)")
		return
	}
	if err != nil {
		a.problem("cannot read the report file: " + err.Error())
		return
	}
	r, err := database.ParseInstanceReport(raw)
	if err != nil {
		a.problem("the report file is not one the hook accepts: " + err.Error())
		return
	}
	if !a.due(r, now) {
		return
	}
	if err := a.publish(ctx, r); err != nil {
		a.problem(err.Error())
		return
	}
	a.published, a.publishedAt = &r, now
	if a.lastProblem != "" {
		a.cfg.Logger.Info("publishing again", "after", a.lastProblem)
		a.lastProblem = ""
	}
}

// due decides whether r goes on the pod now: the first report, a change of
// state, any change during a switchover, or a changed position once a
// heartbeat has passed. An unchanged report is never written again.
func (a *agent) due(r database.PodReport, now time.Time) bool {
	switch {
	case a.published == nil:
		return true
	case r.Equal(*a.published):
		return false
	case !r.SameState(*a.published):
		return true
	case a.switchingOver():
		return true
	default:
		return now.Sub(a.publishedAt) >= a.cfg.Heartbeat
	}
}

// switchingOver reports whether the mounted record asks for a switchover.
func (a *agent) switchingOver() bool {
	if a.cfg.TopologyDir == "" {
		return false
	}
	raw, err := os.ReadFile(filepath.Join(a.cfg.TopologyDir, switchoverKey))
	return err == nil && strings.TrimSpace(string(raw)) != ""
}

func (a *agent) problem(msg string) {
	if msg == a.lastProblem {
		return
	}
	a.lastProblem = msg
	a.cfg.Logger.Warn("report not published", "reason", msg)
}
