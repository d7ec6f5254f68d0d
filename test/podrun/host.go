package podrun

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// Host is what the pods of one test share.
type Host struct {
	// Root is the temporary root every pod's directories are under. It is
	// short (unix socket paths are limited to 107 bytes) and removed at the
	// end of the test.
	Root string
	// BinDir is prepended to every container's PATH, after Path.
	BinDir string
	// Path are directories put first on every container's PATH (stubs).
	Path []string
	// Values replaces env values exactly: {"db.ns.svc": "127.0.0.1"}.
	Values map[string]string
	// Env is added to every container's environment, after the spec's: what
	// a cluster gives a pod by other means, such as the addresses of other
	// pods that all listen on 127.0.0.1 here (PEER_ADDRESSES for the
	// Database instances: "<pod>=127.0.0.1:<port> ...").
	Env map[string]string
	// ServiceAccountTokens are the tokens a projected serviceAccountToken
	// source gives, by the pod's serviceAccountName; none gives an empty
	// token file (nothing here checks it).
	ServiceAccountTokens map[string]string

	t          testing.TB
	mu         sync.Mutex
	secrets    map[string]*corev1.Secret
	configMaps map[string]*corev1.ConfigMap
}

// NewHost makes a Host with a fresh root, removed when t ends.
func NewHost(t testing.TB, binDir string) *Host {
	t.Helper()
	root, err := os.MkdirTemp("", "podrun")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unseal(root) // read-only mounts (readonly.go)
		_ = os.RemoveAll(root)
	})
	return &Host{Root: root, BinDir: binDir, Values: map[string]string{}, Env: map[string]string{}, ServiceAccountTokens: map[string]string{}, t: t,
		secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{}}
}

// AddSecret makes s available to env and volumes (by name).
func (h *Host) AddSecret(s *corev1.Secret) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.secrets[s.Name] = s
}

// AddConfigMap makes cm available to env and volumes (by name).
func (h *Host) AddConfigMap(cm *corev1.ConfigMap) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.configMaps[cm.Name] = cm
}

// Secret returns the Secret name given to AddSecret.
func (h *Host) Secret(name string) *corev1.Secret {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.secrets[name]
}

// Claim is the directory of PVC name: the same for every pod of the Host,
// like a volume that outlives its pods. It is made on first use.
func (h *Host) Claim(name string) string {
	dir := filepath.Join(h.Root, "pvc", name)
	h.mkdir(dir)
	return dir
}

func (h *Host) mkdir(dir string) {
	h.t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
}

// credential is the uid and gid processes run as: the pod's when running as
// root, nil (the test's own) otherwise.
func (h *Host) credential(uid, gid *int64) *syscall.Credential {
	h.t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	u, g := int64(999), int64(999)
	if uid != nil {
		u = *uid
	}
	if gid != nil {
		g = *gid
	} else {
		g = u
	}
	ensureAccount(h.t, u, g)
	return &syscall.Credential{Uid: uint32(u), Gid: uint32(g), Groups: []uint32{uint32(g)}}
}

var accountMu sync.Mutex

// ensureAccount creates group gid and user uid (metahooks-<uid>) when the
// system has no entry for them: initdb refuses a uid without one. Another
// process may create them at the same time; only the final lookup counts.
func ensureAccount(t testing.TB, uid, gid int64) {
	t.Helper()
	accountMu.Lock()
	defer accountMu.Unlock()
	if _, err := user.LookupGroupId(strconv.FormatInt(gid, 10)); err != nil {
		_ = exec.Command("groupadd", "--system", "--gid", strconv.FormatInt(gid, 10), fmt.Sprintf("metahooks-%d", gid)).Run()
	}
	if _, err := user.LookupId(strconv.FormatInt(uid, 10)); err != nil {
		_ = exec.Command("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
			"--uid", strconv.FormatInt(uid, 10), "--gid", strconv.FormatInt(gid, 10), fmt.Sprintf("metahooks-%d", uid)).Run()
	}
	if _, err := user.LookupId(strconv.FormatInt(uid, 10)); err != nil {
		t.Fatalf("no user with uid %d, and useradd could not make one: %v", uid, err)
	}
}

// chownAll gives dir and everything under it to cred (fsGroup's effect).
func chownAll(dir string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, int(cred.Uid), int(cred.Gid))
	})
}
