package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

// The whole loop runs on a second control plane, a cluster: etcd and
// kube-apiserver (envtest), kube-controller-manager with the controllers the
// hooks' children need, kube-scheduler, and kwok playing the kubelets of a few
// fake nodes with its own stage definitions, read from the sigs.k8s.io/kwok
// module (kustomize/stage/, linked as kwok-stage next to the binaries by
// hack/kube-binaries/build.sh):
//   - node-initialize and node-heartbeat-with-lease: the nodes turn Ready;
//   - pod-ready, pod-complete, pod-delete: a scheduled pod runs and is Ready,
//     a Job's pod Succeeds, a deleted pod goes;
// and, for volumes, a default StorageClass with WaitForFirstConsumer binding
// whose provisioner runs in the test (provisioner_test.go).
//
// The tests on the first control plane write controller statuses themselves;
// here no test writes any status but the parent's, which Metacontroller (the
// test) writes from the hook's answer.

// clusterControllers are kube-controller-manager's controllers the hooks'
// children need: pods for StatefulSets and Jobs, Jobs for CronJobs, garbage
// collection of owned objects, PVCs kept while a pod uses them, and claims
// bound to the volumes the test's provisioner makes.
var clusterControllers = []string{
	"statefulset-controller",
	"job-controller",
	"cronjob-controller",
	"garbage-collector-controller",
	"persistentvolumeclaim-protection-controller",
	"persistentvolume-binder-controller",
}

// kwokStages are the stage files, relative to kustomize/stage/ of the kwok module.
var kwokStages = []string{
	"node/fast/node-initialize.yaml",
	"node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"pod/fast/pod-ready.yaml",
	"pod/fast/pod-complete.yaml",
	"pod/fast/pod-delete.yaml",
}

// clusterNodes are the fake nodes, one per zone: enough to spread a MyApp.
var clusterNodes = []struct{ name, zone string }{
	{"kwok-node-0", "zone-a"}, {"kwok-node-1", "zone-b"}, {"kwok-node-2", "zone-c"},
}

// cluster is the running second control plane.
type cluster struct {
	env     *envtest.Environment
	client  client.Client
	version string // kube-apiserver's gitVersion, named in every figure
	dir     string // kubeconfig and the components' logs
	procs   []*component
	// stopProvisioner ends provisionVolumes and waits for it.
	stopProvisioner func()
}

// component is one process of the cluster, logging to a file.
type component struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

var theCluster struct {
	once sync.Once
	c    *cluster
	err  error
}

// useCluster starts the cluster (once per test binary) and points the
// package's client at it for the rest of the test. The package's tests run one
// at a time (none calls t.Parallel), so every helper that uses k8s talks to
// the cluster while a full-loop test runs.
func useCluster(t *testing.T) *cluster {
	t.Helper()
	theCluster.once.Do(func() { theCluster.c, theCluster.err = startCluster() })
	if theCluster.err != nil {
		t.Fatalf("cannot start the cluster (kube-controller-manager, kube-scheduler, kwok): %v", theCluster.err)
	}
	c := theCluster.c
	for _, p := range c.procs {
		select {
		case <-p.done:
			t.Fatalf("%s exited: %v\n%s", p.name, p.cmd.ProcessState, tail(p.log))
		default:
		}
	}
	previous := k8s
	k8s = c.client
	t.Cleanup(func() {
		if t.Failed() {
			c.describe(t)
		}
		k8s = previous
	})
	return c
}

// describe logs what a failed full-loop test needs to be understood: the
// pods, claims and events of the cluster, and the end of each component's log.
func (c *cluster) describe(t *testing.T) {
	ctx := context.Background()
	var out strings.Builder
	pods := &corev1.PodList{}
	if err := c.client.List(ctx, pods); err == nil {
		for _, pod := range pods.Items {
			fmt.Fprintf(&out, "pod %s/%s: phase %s, node %q, deleting %v, conditions", pod.Namespace, pod.Name, pod.Status.Phase, pod.Spec.NodeName, pod.DeletionTimestamp != nil)
			for _, cond := range pod.Status.Conditions {
				fmt.Fprintf(&out, " %s=%s(%s)", cond.Type, cond.Status, cond.Reason)
			}
			out.WriteString("\n")
		}
	}
	claims := &corev1.PersistentVolumeClaimList{}
	if err := c.client.List(ctx, claims); err == nil {
		for _, claim := range claims.Items {
			fmt.Fprintf(&out, "pvc %s/%s: phase %s, volume %q, deleting %v\n", claim.Namespace, claim.Name, claim.Status.Phase, claim.Spec.VolumeName, claim.DeletionTimestamp != nil)
		}
	}
	events := &corev1.EventList{}
	if err := c.client.List(ctx, events); err == nil {
		for _, e := range events.Items {
			if e.Type != corev1.EventTypeNormal {
				fmt.Fprintf(&out, "event %s %s/%s: %s: %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
			}
		}
	}
	for _, p := range c.procs {
		fmt.Fprintf(&out, "--- end of %s's log:\n%s\n", p.name, tail(p.log))
	}
	t.Logf("cluster state on Kubernetes %s:\n%s", c.version, out.String())
}

// stopCluster stops whatever startCluster started; TestMain calls it.
func stopCluster() {
	if c := theCluster.c; c != nil {
		c.stop()
	}
}

func (c *cluster) stop() {
	if c.stopProvisioner != nil {
		c.stopProvisioner()
	}
	for i := len(c.procs) - 1; i >= 0; i-- {
		p := c.procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	}
	if c.env != nil {
		if err := c.env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: cannot stop the cluster's API server:", err)
		}
	}
	_ = os.RemoveAll(c.dir)
}

func startCluster() (_ *cluster, err error) {
	started := time.Now()
	assets, err := kubeAssets()
	if err != nil {
		return nil, err
	}
	for _, binary := range []string{"kube-controller-manager", "kube-scheduler", "kwok", "kwok-stage/pod"} {
		if _, err := os.Stat(filepath.Join(assets, binary)); err != nil {
			return nil, fmt.Errorf("%s is missing from %s (hack/kube-binaries/build.sh builds it): %w", binary, assets, err)
		}
	}
	dir, err := os.MkdirTemp("", "metahooks-cluster-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	// envtest's progress lines go nowhere; its failures come back as errors.
	ctrllog.SetLogger(ctrllog.Log.WithSink(ctrllog.NullLogSink{}))
	c.env = &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		CRDDirectoryPaths:        crdPaths(),
		ControlPlaneStartTimeout: 3 * time.Minute, // as for the first control plane
		ErrorIfCRDPathMissing:    true,
		Scheme:                   k8s.Scheme(),
	}
	cfg, err := c.env.Start()
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver and etcd: %w", err)
	}
	if c.client, err = client.New(cfg, client.Options{Scheme: k8s.Scheme()}); err != nil {
		return nil, err
	}
	info, err := discovery.NewDiscoveryClientForConfigOrDie(cfg).ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver version: %w", err)
	}
	c.version = info.GitVersion

	admin, err := c.env.ControlPlane.AddUser(envtest.User{Name: "e2e-cluster-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := admin.KubeConfig()
	if err != nil {
		return nil, err
	}
	kubeconfigFile := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfigFile, kubeconfig, 0o600); err != nil {
		return nil, err
	}

	if err := c.client.Create(context.Background(), defaultStorageClass()); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	provisioned := make(chan struct{})
	go func() { provisionVolumes(ctx, c.client); close(provisioned) }()
	c.stopProvisioner = func() { cancel(); <-provisioned }

	stages := filepath.Join(assets, "kwok-stage")
	kwokArgs := []string{"--kubeconfig=" + kubeconfigFile, "--manage-all-nodes=false", "--manage-nodes-with-label-selector=type=kwok"}
	for _, stage := range kwokStages {
		kwokArgs = append(kwokArgs, "--config="+filepath.Join(stages, stage))
	}
	for _, spec := range []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{
			"--kubeconfig=" + kubeconfigFile, "--leader-elect=false", "--secure-port=0",
			"--controllers=" + strings.Join(clusterControllers, ","),
			"--kube-api-qps=200", "--kube-api-burst=400", "--pvclaimbinder-sync-period=1s",
		}},
		{"kube-scheduler", []string{"--kubeconfig=" + kubeconfigFile, "--leader-elect=false", "--secure-port=0"}},
		{"kwok", kwokArgs},
	} {
		p, err := c.run(filepath.Join(assets, spec.name), spec.name, spec.args...)
		if err != nil {
			return nil, err
		}
		c.procs = append(c.procs, p)
	}
	if err := c.createNodes(); err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "e2e: cluster on Kubernetes %s (kube-apiserver, kube-controller-manager, kube-scheduler from %s; kwok) up in %s\n",
		c.version, assets, time.Since(started).Round(time.Millisecond))
	return c, nil
}

// run starts one component with its output in a log file. The process dies
// with the test binary (Pdeathsig) so that nothing is left behind.
func (c *cluster) run(binary, name string, args ...string) (*component, error) {
	log := filepath.Join(c.dir, name+".log")
	out, err := os.Create(log)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	p := &component{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// createNodes registers the fake nodes and waits until kwok reports them
// Ready. Then it removes the taint node.kubernetes.io/not-ready that the API
// server put on each new node, as the node lifecycle controller would (it is
// not run: kwok's heartbeats keep the nodes Ready, nothing else changes them).
func (c *cluster) createNodes() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, n := range clusterNodes {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: n.name,
			Labels: map[string]string{
				"type": "kwok", corev1.LabelHostname: n.name, corev1.LabelTopologyZone: n.zone,
				corev1.LabelOSStable: "linux", corev1.LabelArchStable: "amd64",
			},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
		}}
		if err := c.client.Create(ctx, node); err != nil {
			return fmt.Errorf("cannot create node %s: %w", n.name, err)
		}
	}
	for {
		nodes := &corev1.NodeList{}
		if err := c.client.List(ctx, nodes, client.MatchingLabels{"type": "kwok"}); err != nil {
			return err
		}
		ready := 0
		for _, node := range nodes.Items {
			for _, cond := range node.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					ready++
				}
			}
		}
		if ready == len(clusterNodes) {
			for i := range nodes.Items {
				node := &nodes.Items[i]
				original := node.DeepCopy()
				kept := []corev1.Taint{}
				for _, taint := range node.Spec.Taints {
					if taint.Key != corev1.TaintNodeNotReady {
						kept = append(kept, taint)
					}
				}
				node.Spec.Taints = kept
				// A patch: kwok's heartbeats change the node all the time.
				if err := c.client.Patch(ctx, node, client.MergeFrom(original)); err != nil {
					return fmt.Errorf("cannot untaint node %s: %w", node.Name, err)
				}
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d of %d kwok nodes Ready after 2 minutes; kwok log:\n%s", ready, len(clusterNodes), tail(c.procs[len(c.procs)-1].log))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tail is the end of a log file, for failure messages.
func tail(file string) string {
	raw, err := os.ReadFile(file)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
