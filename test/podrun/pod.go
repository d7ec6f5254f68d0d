package podrun

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// Pod is one rendered pod spec mapped onto the Host.
type Pod struct {
	Name string
	Spec corev1.PodSpec
	// Path are directories put first on this pod's PATH, before Host.Path.
	Path []string
	// Values replaces env values exactly, before Host.Values.
	Values map[string]string

	host    *Host
	volumes map[string]string // volume name -> host directory
	// readOnly are the PVCs whose source is read-only: every mount of them is.
	readOnly map[string]bool
	sealed   map[string]bool // ConfigMaps and Secrets: read-only by how they are made
}

// Pod maps spec onto the host under name. Volumes are made now: PVCs are the
// Host's claims, emptyDirs new directories, ConfigMaps and Secrets their keys
// as files (so they must have been added first), read-only.
func (h *Host) Pod(name string, spec corev1.PodSpec) *Pod {
	h.t.Helper()
	p := &Pod{Name: name, Spec: spec, Values: map[string]string{}, host: h, volumes: map[string]string{}, readOnly: map[string]bool{}, sealed: map[string]bool{}}
	cred := p.credential(nil)
	for _, v := range spec.Volumes {
		dir := filepath.Join(h.Root, "pods", name, v.Name)
		p.volumes[v.Name] = dir
		switch {
		case v.PersistentVolumeClaim != nil:
			dir = h.Claim(v.PersistentVolumeClaim.ClaimName)
			p.volumes[v.Name] = dir
			p.readOnly[v.Name] = v.PersistentVolumeClaim.ReadOnly
		case v.EmptyDir != nil:
			h.mkdir(dir)
		case v.ConfigMap != nil:
			cm := h.configMaps[v.ConfigMap.Name]
			if cm == nil {
				h.t.Fatalf("pod %s: volume %s: no ConfigMap %s on the host", name, v.Name, v.ConfigMap.Name)
			}
			p.sealed[v.Name] = true
			p.writeKeys(v.Name, stringKeys(cm.Data), v.ConfigMap.Items, v.ConfigMap.DefaultMode)
			continue
		case v.Secret != nil:
			s := h.secrets[v.Secret.SecretName]
			if s == nil {
				h.t.Fatalf("pod %s: volume %s: no Secret %s on the host", name, v.Name, v.Secret.SecretName)
			}
			p.sealed[v.Name] = true
			p.writeKeys(v.Name, s.Data, v.Secret.Items, v.Secret.DefaultMode)
			continue
		case v.Projected != nil:
			p.sealed[v.Name] = true
			p.writeKeys(v.Name, p.projected(v), nil, v.Projected.DefaultMode)
			continue
		default:
			h.t.Fatalf("pod %s: volume %s: only PVC, emptyDir, ConfigMap, Secret and projected volumes are mapped", name, v.Name)
		}
		if err := chownAll(dir, cred); err != nil {
			h.t.Fatal(err)
		}
	}
	return p
}

// projected is a projected volume's files by path: the items (or keys) of
// its ConfigMap and Secret sources, and its serviceAccountToken source's
// token from Host.ServiceAccountTokens.
func (p *Pod) projected(v corev1.Volume) map[string][]byte {
	h := p.host
	files := map[string][]byte{}
	add := func(source string, data map[string][]byte, items []corev1.KeyToPath) {
		if items == nil {
			for k, val := range data {
				files[k] = val
			}
		}
		for _, it := range items {
			val, ok := data[it.Key]
			if !ok {
				h.t.Fatalf("pod %s: volume %s: %s has no key %s", p.Name, v.Name, source, it.Key)
			}
			files[it.Path] = val
		}
	}
	for _, src := range v.Projected.Sources {
		switch {
		case src.ConfigMap != nil:
			cm := h.configMaps[src.ConfigMap.Name]
			if cm == nil {
				h.t.Fatalf("pod %s: volume %s: no ConfigMap %s on the host", p.Name, v.Name, src.ConfigMap.Name)
			}
			add("ConfigMap "+cm.Name, stringKeys(cm.Data), src.ConfigMap.Items)
		case src.Secret != nil:
			s := h.secrets[src.Secret.Name]
			if s == nil {
				h.t.Fatalf("pod %s: volume %s: no Secret %s on the host", p.Name, v.Name, src.Secret.Name)
			}
			add("Secret "+s.Name, s.Data, src.Secret.Items)
		case src.ServiceAccountToken != nil:
			files[src.ServiceAccountToken.Path] = []byte(h.ServiceAccountTokens[p.Spec.ServiceAccountName])
		default:
			h.t.Fatalf("pod %s: volume %s: only ConfigMap, Secret and serviceAccountToken sources are mapped", p.Name, v.Name)
		}
	}
	return files
}

func stringKeys(data map[string]string) map[string][]byte {
	out := make(map[string][]byte, len(data))
	for k, v := range data {
		out[k] = []byte(v)
	}
	return out
}

// UpdateConfigMap gives the pod's volumes of ConfigMap cm its new keys, as
// the kubelet does some time after the ConfigMap changed (and AddConfigMap
// for the env of containers started later).
func (p *Pod) UpdateConfigMap(cm *corev1.ConfigMap) {
	p.host.t.Helper()
	p.host.AddConfigMap(cm)
	for _, v := range p.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == cm.Name {
			p.writeKeys(v.Name, stringKeys(cm.Data), v.ConfigMap.Items, v.ConfigMap.DefaultMode)
		}
	}
}

// writeKeys (re)makes the directory of ConfigMap or Secret volume name: its
// keys (or items) as files, with defaultMode (0644 unless set) and, with an
// fsGroup, group-readable, as the kubelet makes them; then sealed read-only.
func (p *Pod) writeKeys(name string, data map[string][]byte, items []corev1.KeyToPath, defaultMode *int32) {
	h := p.host
	h.t.Helper()
	// The files are made beside the volume's directory, which is then
	// swapped in by renames: a reader sees all of the old keys or all of the
	// new ones (the kubelet swaps a symlink), or for an instant none.
	final := p.volumes[name]
	dir := final + "..new"
	h.mkdir(dir)
	mode := os.FileMode(0o644)
	if defaultMode != nil {
		mode = os.FileMode(*defaultMode) & 0o777
	}
	type file struct {
		path string
		mode os.FileMode
	}
	files := map[string]file{}
	if items == nil {
		for k := range data {
			files[k] = file{k, mode}
		}
	}
	for _, it := range items {
		m := mode
		if it.Mode != nil {
			m = os.FileMode(*it.Mode) & 0o777
		}
		files[it.Key] = file{it.Path, m}
	}
	for k, f := range files {
		val, ok := data[k]
		if !ok {
			h.t.Fatalf("pod %s: volume %s: no key %s", p.Name, name, k)
		}
		path := filepath.Join(dir, f.path)
		h.mkdir(filepath.Dir(path))
		if p.fsGroup() != nil {
			f.mode |= 0o440
		}
		h.writeFile(path, val, f.mode)
		if err := os.Chmod(path, f.mode); err != nil { // past the umask
			h.t.Fatal(err)
		}
	}
	if err := seal(dir, p.credential(nil), p.fsGroup(), false); err != nil {
		h.t.Fatal(err)
	}
	old := final + "..old"
	if err := os.Rename(final, old); err != nil && !os.IsNotExist(err) {
		h.t.Fatal(err)
	}
	if err := os.Rename(dir, final); err != nil {
		h.t.Fatal(err)
	}
	if err := unseal(old); err != nil && !os.IsNotExist(err) {
		h.t.Fatal(err)
	}
	if err := os.RemoveAll(old); err != nil {
		h.t.Fatal(err)
	}
}

func (p *Pod) fsGroup() *int64 {
	if sc := p.Spec.SecurityContext; sc != nil {
		return sc.FSGroup
	}
	return nil
}

// StatefulSetPod is pod 0 of sts: its template, with a PVC volume per
// volumeClaimTemplate (claim <template>-<sts>-0), as the StatefulSet
// controller makes it.
func (h *Host) StatefulSetPod(sts *appsv1.StatefulSet) *Pod {
	spec := *sts.Spec.Template.Spec.DeepCopy()
	for _, vct := range sts.Spec.VolumeClaimTemplates {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: vct.Name, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: fmt.Sprintf("%s-%s-0", vct.Name, sts.Name)},
		}})
	}
	return h.Pod(sts.Name+"-0", spec)
}

func (h *Host) writeFile(path string, data []byte, mode os.FileMode) {
	h.t.Helper()
	if err := os.WriteFile(path, data, mode); err != nil {
		h.t.Fatal(err)
	}
}

// Volume is the host directory of the pod's volume name.
func (p *Pod) Volume(name string) string { return p.volumes[name] }

// Container is the init container or container name of the pod.
func (p *Pod) Container(name string) *corev1.Container {
	for _, list := range [][]corev1.Container{p.Spec.InitContainers, p.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	p.host.t.Fatalf("pod %s has no container %s", p.Name, name)
	return nil
}

// HostPath is where path, as container sees it, is on the host ("" when no
// mount of container holds it).
func (p *Pod) HostPath(container, path string) string {
	for _, m := range p.mounts(p.Container(container)) {
		if path == m.from || strings.HasPrefix(path, m.from+"/") {
			return m.to + strings.TrimPrefix(path, m.from)
		}
	}
	return ""
}

type mount struct {
	from, to string
	readOnly bool
}

// mounts are the container's mount paths and their host directories, the
// longest mount path first.
func (p *Pod) mounts(c *corev1.Container) []mount {
	var ms []mount
	for _, vm := range c.VolumeMounts {
		dir, ok := p.volumes[vm.Name]
		if !ok {
			p.host.t.Fatalf("pod %s container %s: mount of unknown volume %s", p.Name, c.Name, vm.Name)
		}
		if vm.SubPath != "" {
			dir = filepath.Join(dir, vm.SubPath)
		}
		ms = append(ms, mount{from: strings.TrimSuffix(vm.MountPath, "/"), to: dir, readOnly: (vm.ReadOnly || p.readOnly[vm.Name]) && !p.sealed[vm.Name]})
	}
	sort.Slice(ms, func(i, j int) bool { return len(ms[i].from) > len(ms[j].from) })
	return ms
}

// rewrite maps every mount path in s (at the start, or after '=', and
// followed by the end or '/') to its host directory. Scripts (several lines)
// are left alone.
func rewrite(s string, ms []mount) string {
	if strings.Contains(s, "\n") {
		return s
	}
	for _, m := range ms {
		re := regexp.MustCompile(`(^|=)` + regexp.QuoteMeta(m.from) + `(/|$)`)
		s = re.ReplaceAllString(s, "${1}"+strings.ReplaceAll(m.to, "$", "$$")+"${2}")
	}
	return s
}

// env resolves the container's env in order, as the kubelet does: a value
// has its $(VAR) references to the env declared before it expanded and its
// mount paths rewritten; a Secret or ConfigMap key is taken as it is; then
// Pod.Values and Host.Values are substituted. It returns the process's
// environment and the declared variables (what command and args expand).
func (p *Pod) env(c *corev1.Container, ms []mount) ([]string, map[string]string, error) {
	h := p.host
	path := strings.Join(append(append(append([]string{}, p.Path...), h.Path...), h.BinDir, "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"), ":")
	env := []string{"PATH=" + path, "HOME=/nonexistent", "HOSTNAME=" + p.Name}
	declared := map[string]string{}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range c.Env {
		value := e.Value
		if value != "" {
			value = rewrite(expand(value, declared), ms)
		} else if src := e.ValueFrom; src != nil {
			switch {
			case src.SecretKeyRef != nil:
				ref := src.SecretKeyRef
				s := h.secrets[ref.Name]
				if s == nil || s.Data[ref.Key] == nil {
					return nil, nil, fmt.Errorf("env %s: no key %s in Secret %s on the host", e.Name, ref.Key, ref.Name)
				}
				value = string(s.Data[ref.Key])
			case src.ConfigMapKeyRef != nil:
				ref := src.ConfigMapKeyRef
				cm := h.configMaps[ref.Name]
				v, ok := "", false
				if cm != nil {
					v, ok = cm.Data[ref.Key]
				}
				if !ok {
					return nil, nil, fmt.Errorf("env %s: no key %s in ConfigMap %s on the host", e.Name, ref.Key, ref.Name)
				}
				value = v
			case src.FieldRef != nil && src.FieldRef.FieldPath == "metadata.name":
				value = p.Name
			default:
				return nil, nil, fmt.Errorf("env %s: only Secret and ConfigMap keys and metadata.name are resolved", e.Name)
			}
		}
		if v, ok := p.Values[value]; ok {
			value = v
		} else if v, ok := h.Values[value]; ok {
			value = v
		}
		declared[e.Name] = value
		env = append(env, e.Name+"="+value)
	}
	return env, declared, nil
}

// Cmd is the exec.Cmd of argv (the container's command and args when nil) in
// container's environment, as the pod's user, in its own process group.
func (p *Pod) Cmd(ctx context.Context, container string, argv []string) *exec.Cmd {
	p.host.t.Helper()
	c := p.Container(container)
	ms := p.mounts(c)
	for i := range ms {
		if ms[i].readOnly {
			ms[i].to = p.readOnlyView(c, ms[i].to)
		}
	}
	env, declared, err := p.env(c, ms)
	if err != nil {
		p.host.t.Fatalf("pod %s container %s: %v", p.Name, container, err)
	}
	if argv == nil {
		// The kubelet expands the container's command and args, never the
		// command of a lifecycle hook or probe.
		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			argv = append(argv, expand(a, declared))
		}
	}
	if len(argv) == 0 {
		p.host.t.Fatalf("pod %s container %s: no command (the image's entrypoint is not run)", p.Name, container)
	}
	args := make([]string, len(argv))
	for i, a := range argv {
		args[i] = rewrite(a, ms)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(env, p.host.envList()...)
	cmd.Dir = p.host.Root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: p.credential(c)}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

func (p *Pod) credential(c *corev1.Container) *syscall.Credential {
	var uid, gid *int64
	if sc := p.Spec.SecurityContext; sc != nil {
		uid, gid = sc.RunAsUser, sc.RunAsGroup
	}
	if c != nil && c.SecurityContext != nil {
		if c.SecurityContext.RunAsUser != nil {
			uid = c.SecurityContext.RunAsUser
		}
		if c.SecurityContext.RunAsGroup != nil {
			gid = c.SecurityContext.RunAsGroup
		}
	}
	cred := p.host.credential(uid, gid)
	if fsg := p.fsGroup(); cred != nil && fsg != nil && uint32(*fsg) != cred.Gid {
		cred.Groups = append(cred.Groups, uint32(*fsg)) // the kubelet adds fsGroup to the supplementary groups
	}
	return cred
}

// Result is how a command ended.
type Result struct {
	Code     int    // exit status; -1 when killed by a signal
	Stdout   string // what it printed
	Stderr   string
	Log      string // stdout and stderr interleaved, as kubectl logs shows them
	Duration time.Duration
}

// Message is what the kubelet would record as the termination message of a
// failed container with terminationMessagePolicy FallbackToLogsOnError: the
// last 80 lines of the log, at most 2048 bytes.
func (r Result) Message() string {
	lines := strings.Split(strings.TrimRight(r.Log, "\n"), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	msg := strings.Join(lines, "\n")
	if len(msg) > 2048 {
		msg = msg[len(msg)-2048:]
	}
	return msg
}

// Run runs container's command to its end (at most timeout).
func (p *Pod) Run(container string, timeout time.Duration) Result {
	p.host.t.Helper()
	return p.Exec(container, nil, timeout)
}

// Exec runs argv in container's environment (a lifecycle hook, a probe, a
// kubectl exec) to its end, at most timeout.
func (p *Pod) Exec(container string, argv []string, timeout time.Duration) Result {
	p.host.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := p.Cmd(ctx, container, argv)
	var out, errOut bytes.Buffer
	var log syncBuffer
	cmd.Stdout = io.MultiWriter(&out, &log)
	cmd.Stderr = io.MultiWriter(&errOut, &log)
	start := time.Now()
	err := cmd.Run()
	r := Result{Code: cmd.ProcessState.ExitCode(), Stdout: out.String(), Stderr: errOut.String(), Log: log.String(), Duration: time.Since(start)}
	if err != nil && cmd.ProcessState == nil {
		p.host.t.Fatalf("pod %s container %s: cannot run: %v", p.Name, container, err)
	}
	return r
}

// Process is a container's command running in the background.
type Process struct {
	Cmd  *exec.Cmd
	log  syncBuffer
	done chan struct{}
	err  error
}

// Start starts container's command and stops it (SIGKILL to its process
// group) when the test ends, if it still runs.
func (p *Pod) Start(container string) *Process {
	p.host.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := p.Cmd(ctx, container, nil)
	proc := &Process{Cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &proc.log, &proc.log
	if err := cmd.Start(); err != nil {
		cancel()
		p.host.t.Fatalf("pod %s container %s: cannot start: %v", p.Name, container, err)
	}
	go func() {
		proc.err = cmd.Wait()
		close(proc.done)
	}()
	p.host.t.Cleanup(func() {
		cancel()
		<-proc.done
	})
	return proc
}

// Log is what the process printed so far.
func (pr *Process) Log() string { return pr.log.String() }

// Signal sends sig to the process (the container's PID 1).
func (pr *Process) Signal(sig os.Signal) error { return pr.Cmd.Process.Signal(sig) }

// Wait waits at most timeout for the process to end: its exit code, or an
// error when it still runs.
func (pr *Process) Wait(timeout time.Duration) (int, error) {
	select {
	case <-pr.done:
		return pr.Cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		return 0, fmt.Errorf("still running after %s", timeout)
	}
}

// Exited reports whether the process has ended.
func (pr *Process) Exited() bool {
	select {
	case <-pr.done:
		return true
	default:
		return false
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
