package database

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
)

// instanceScenarios are the golden cases of a Database with instances >= 2
// (testdata/ha-*); TestGolden and TestSameRequestSameBytes run them with the
// others. Their decisions are in TestDecideTopology; these show whole answers.
var instanceScenarios = []scenario{
	{
		name:   "ha-first-sync",
		reason: "instances 3, nothing observed: three pods (Parallel, spread), the topology naming orders-0, Services <n> (on orders-0), -ro, -r, the PDB",
		build: func(t *testing.T) *composite.Request {
			return newRequest(t, newDatabase(withInstances(3)), false)
		},
	},
	{
		name:   "ha-streaming",
		reason: "instances 3, all ready and streaming: Ready, Replicating, no failover, lag 0 and 0x10 bytes, backups from a standby (<n>-ro)",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withInstances(3), withBackup("30 2 * * *", 5))
			return haRequest(t, db, db, &haRecord{primary: "orders-0"},
				[]podState{primaryPod("0/5000110"), streaming("0/5000110"), streaming("0/5000100")})
		},
	},
	{
		name:   "ha-fence",
		reason: "the hook first saw the primary not ready 45 s ago (past the 30 s delay), the standbys still streaming: the record is fenced under epoch 1, FailingOver Fencing; resync",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withInstances(3))
			return haRequest(t, db, db, seenLost,
				[]podState{primaryPod("0/5000100").lost(), streaming("0/5000100"), streaming("0/5000100")})
		},
	},
	{
		name:   "ha-failover",
		reason: "fenced, both standbys report epoch 1: orders-2 (further along) is promoted under epoch 2, the read-write Service moves, the record says why and when",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withInstances(3))
			return haRequest(t, db, db, fencedAt,
				[]podState{primaryPod("0/5000100").lost(), final("0/50000F0"), final("0/5000100")})
		},
	},
	{
		name:   "ha-failover-blocked",
		reason: "fenced, synchronous, orders-2's pod gone: no standby is promoted and FailingOver says why; resync",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withInstances(3))
			return haRequest(t, db, db, fencedAt,
				[]podState{primaryPod("0/5000100").lost(), final("0/5000100"), {missing: true}})
		},
	},
	{
		name:   "ha-switchover",
		reason: "spec.primary orders-1: the record asks orders-0 to shut down cleanly before orders-1 is promoted; the Service stays until then",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withInstances(3), withPrimary("orders-1"), withGeneration(2))
			return haRequest(t, db, newDatabase(withInstances(3)), &haRecord{primary: "orders-0"},
				[]podState{primaryPod("0/5000100"), streaming("0/5000100"), streaming("0/5000100")})
		},
	},
	{
		name:   "ha-rolling-update",
		reason: "a new image at instances 3: the template changes with partition 1, so the standbys roll first and the primary last",
		build: func(t *testing.T) *composite.Request {
			db := newDatabase(withInstances(3), withGeneration(2), func(db *dbv1.Database) { db.Spec.Image = "postgres:17.2" })
			return haRequest(t, db, newDatabase(withInstances(3)), &haRecord{primary: "orders-0"},
				[]podState{primaryPod("0/5000100"), streaming("0/5000100"), streaming("0/5000100")})
		},
	},
}

// TestInstancesFixedPoint feeds each answer's topology ConfigMap and status
// back as observed, twice: the second answer must equal the first fed-back
// one byte for byte (a decision is taken once, then nothing changes: no hot
// loop, no second failover).
func TestInstancesFixedPoint(t *testing.T) {
	for _, sc := range instanceScenarios {
		t.Run(sc.name, func(t *testing.T) {
			req := sc.build(t)
			once := feedBack(t, req, mustSync(t, req))
			second := mustSync(t, once)
			third := mustSync(t, feedBack(t, once, second))
			a, b := indent(t, second), indent(t, third)
			if !bytes.Equal(a, b) {
				t.Errorf("%s\nfeeding the answer back must change nothing: -second +third:\n%s", sc.reason, cmp.Diff(string(a), string(b)))
			}
		})
	}
}

// feedBack is req with resp's topology ConfigMap observed and resp's status
// on the parent: what the next call sees once Metacontroller applied resp.
func feedBack(t *testing.T, req *composite.Request, resp *composite.Response) *composite.Request {
	t.Helper()
	next := *req
	next.Children = composite.ChildMap{}
	for k, v := range req.Children {
		next.Children[k] = map[string]json.RawMessage{}
		for name, obj := range v {
			next.Children[k][name] = obj
		}
	}
	var parent dbv1.Database
	if err := json.Unmarshal(req.Parent, &parent); err != nil {
		t.Fatal(err)
	}
	parent.Status = decodeStatus(t, resp)
	next.Parent = mustJSON(t, &parent)
	if cm := responseChild[corev1.ConfigMap](t, resp, "ConfigMap", parent.Name+"-topology"); cm != nil {
		created(cm, &parent, 0)
		next.Children["ConfigMap.v1"][cm.Name] = mustJSON(t, cm)
	}
	return &next
}
