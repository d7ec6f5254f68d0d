package podrun

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// readOnlyProbe tries, as the container's user, every way of changing a
// mount, and prints one line per attempt. It takes the mounts' paths from
// the environment, as the Database's scripts do.
const readOnlyProbe = `
try() { if (eval "$2") 2>/dev/null; then echo "$1: written"; else echo "$1: refused"; fi; }
echo "uid $(id -u)"
for m in ro ro-source config secret; do
	case $m in ro) d=$RO ;; ro-source) d=$RO_SOURCE ;; config) d=$CONFIG ;; secret) d=$SECRET ;; esac
	try "$m new file" "echo x >$d/new"
	try "$m append" "echo x >>$d/existing"
	try "$m remove" "rm $d/existing"
	try "$m mkdir" "mkdir $d/sub"
	try "$m chmod" "chmod 666 $d/existing"
	echo "$m reads $(cat $d/existing)"
done
try "rw new file" "echo x >$RW/new"
try "rw append" "echo more >>$RW/existing"
`

// TestReadOnlyMounts checks that a container cannot write any read-only
// mount (readOnly on the mount, on the PVC source, a ConfigMap, a Secret)
// while it can write the same PVC mounted read-write, and that the other
// mount and the volume keep what they had.
func TestReadOnlyMounts(t *testing.T) {
	h := NewHost(t, "")
	h.AddConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}, Data: map[string]string{"existing": "config"}})
	h.AddSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "sec"}, Data: map[string][]byte{"existing": []byte("secret")}})
	claim := h.Claim("data")
	source := h.Claim("source")
	for dir, content := range map[string]string{claim: "data", source: "source"} {
		if err := os.WriteFile(filepath.Join(dir, "existing"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	spec := corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](999), RunAsGroup: ptr.To[int64](999), FSGroup: ptr.To[int64](999)},
		Volumes: []corev1.Volume{
			{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
			{Name: "source", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "source", ReadOnly: true}}},
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
			{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "sec", DefaultMode: ptr.To[int32](0o400)}}},
		},
		Containers: []corev1.Container{{
			Name: "c",
			VolumeMounts: []corev1.VolumeMount{
				{Name: "data", MountPath: "/rw"},
				{Name: "data", MountPath: "/ro", ReadOnly: true},
				{Name: "source", MountPath: "/ro-source"},
				{Name: "config", MountPath: "/config"},
				{Name: "secret", MountPath: "/secret"},
			},
			Env: []corev1.EnvVar{
				{Name: "RO", Value: "/ro"}, {Name: "RO_SOURCE", Value: "/ro-source"}, {Name: "CONFIG", Value: "/config"},
				{Name: "SECRET", Value: "/secret"}, {Name: "RW", Value: "/rw"},
			},
			Command: []string{"/bin/sh", "-c", readOnlyProbe},
		}},
	}
	p := h.Pod("ro", spec)
	r := p.Run("c", time.Minute)
	if r.Code != 0 {
		t.Fatalf("exit %d:\n%s", r.Code, r.Log)
	}
	uid, chmod := "999", "refused"
	if os.Geteuid() != 0 {
		// runAsUser needs root: the processes run as the test's own user,
		// who owns the sealed copies and so may still chmod them (doc.go).
		uid, chmod = strconv.Itoa(os.Geteuid()), "written"
	}
	want := []string{"uid " + uid}
	for _, m := range []struct{ name, content string }{{"ro", "data"}, {"ro-source", "source"}, {"config", "config"}, {"secret", "secret"}} {
		want = append(want, m.name+" new file: refused", m.name+" append: refused", m.name+" remove: refused",
			m.name+" mkdir: refused", m.name+" chmod: "+chmod, m.name+" reads "+m.content)
	}
	want = append(want, "rw new file: written", "rw append: written")
	if diff := cmp.Diff(strings.Join(want, "\n")+"\n", r.Stdout); diff != "" {
		t.Errorf("writes to the mounts (-want +got):\n%s\nlog:\n%s", diff, r.Log)
	}
	for _, f := range []struct{ path, want string }{
		{filepath.Join(claim, "existing"), "datamore\n"},
		{filepath.Join(claim, "new"), "x\n"},
		{filepath.Join(source, "existing"), "source"},
	} {
		got, err := os.ReadFile(f.path)
		if err != nil || string(got) != f.want {
			t.Errorf("%s holds %q (%v), want %q", f.path, got, err, f.want)
		}
	}
}
