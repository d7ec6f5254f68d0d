package podrun

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	corev1 "k8s.io/api/core/v1"
)

// Read-only mounts. The kubelet mounts ConfigMap and Secret volumes, and any
// volumeMount with readOnly (or a PVC whose source is readOnly), read-only:
// a write fails whoever the process is. Here, without mount namespaces (a
// read-only bind mount needs root, and the tests also run as other users),
// the container's processes run as the pod's user and a read-only mount is a
// directory that user cannot write:
//   - ConfigMap and Secret volumes are made so (seal): as root, owned by root
//     with the pod's fsGroup as group, as the kubelet leaves them; as any
//     other user, owned by it without a write bit;
//   - a read-only mount of a PVC or emptyDir is a sealed copy of the volume,
//     made when the container (or an exec in it) starts: the volume itself
//     stays writable for the pod's other mounts and other pods, and what is
//     written there later is not seen through the copy.
// A process running as root (runAsUser 0 in a test run as root) could still
// write; the Database's pods never run as root.

// readOnlyView is a sealed copy of dir for a read-only mount in c.
func (p *Pod) readOnlyView(c *corev1.Container, dir string) string {
	h := p.host
	h.t.Helper()
	base := filepath.Join(h.Root, "pods", p.Name)
	h.mkdir(base)
	view, err := os.MkdirTemp(base, "ro-"+c.Name+"-")
	if err != nil {
		h.t.Fatal(err)
	}
	if err := os.CopyFS(view, os.DirFS(dir)); err != nil {
		h.t.Fatalf("pod %s container %s: cannot copy %s for its read-only mount: %v", p.Name, c.Name, dir, err)
	}
	if err := seal(view, p.credential(c), p.fsGroup(), true); err != nil {
		h.t.Fatal(err)
	}
	return view
}

// seal makes dir and everything under it unwritable for cred (the pod's
// user; nil when the test does not run as root, and then for the test's own
// user): readable by cred through the group (fsGroup, else cred's group) as
// root, through the owner otherwise. readable adds the read bits a copy of
// the user's own files needs (0600 files become 0440).
func seal(dir string, cred *syscall.Credential, fsGroup *int64, readable bool) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		mode := fi.Mode().Perm() &^ 0o222
		if d.IsDir() {
			mode = 0o555
		} else if readable {
			mode |= 0o440
			if mode&0o100 != 0 {
				mode |= 0o110
			}
		}
		if cred != nil {
			gid := int(cred.Gid)
			if fsGroup != nil {
				gid = int(*fsGroup)
			}
			if err := os.Lchown(path, 0, gid); err != nil {
				return err
			}
			if d.IsDir() {
				mode = 0o755 // root's; the group and the others read and search only
			}
		}
		if err := os.Chmod(path, mode); err != nil {
			return fmt.Errorf("cannot seal %s: %w", path, err)
		}
		return nil
	})
}

// unseal gives the test's user its write bits back on the directories under
// dir, so that they can be removed.
func unseal(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.Chmod(path, 0o755)
		}
		return nil
	})
}
