package podrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestCommandAndEnvExpansion runs a container whose env, command and args
// refer to each other as $(VAR), and checks what its process sees against
// what the kubelet would give it.
func TestCommandAndEnvExpansion(t *testing.T) {
	h := NewHost(t, "")
	h.AddSecret(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Data: map[string][]byte{"user": []byte("alice")}})
	h.Values["db.ns.svc"] = "127.0.0.1"
	spec := corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: ptr.To[int64](999), FSGroup: ptr.To[int64](999)},
		Volumes:         []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Containers: []corev1.Container{{
			Name:         "c",
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
			Env: []corev1.EnvVar{
				{Name: "T_LATER", Value: "[$(T_DIR)]"}, // T_DIR is declared after it
				{Name: "T_DIR", Value: "/data"},
				{Name: "T_SUB", Value: "$(T_DIR)/pgdata"},
				{Name: "T_USER", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "user"}}},
				{Name: "T_DSN", Value: "user=$(T_USER) host=$(T_HOST)"},
				{Name: "T_HOST", Value: "db.ns.svc"},
				{Name: "T_URL", Value: "postgres://$(T_USER)@$(T_HOST)/$(T_UNDEFINED)"},
				{Name: "T_ESCAPED", Value: "$$(T_DIR) $$$(T_DIR) $$ $1"},
				{Name: "T_PATH_REF", Value: "$(PATH)"}, // the image's env is not the pod's
			},
			Command: []string{"/bin/sh", "-c", "env | grep '^T_' | LC_ALL=C sort; printf 'arg %s\\n' \"$@\"", "$(T_USER)"},
			Args:    []string{"$(T_SUB)", "$$(T_SUB)", "--dir=$(T_DIR)", "$(T_NONE)"},
		}},
	}
	p := h.Pod("expand", spec)
	data := p.Volume("data")
	r := p.Run("c", time.Minute)
	if r.Code != 0 {
		t.Fatalf("exit %d:\n%s", r.Code, r.Log)
	}
	want := strings.Join([]string{
		"T_DIR=" + data,
		"T_DSN=user=alice host=$(T_HOST)",
		"T_ESCAPED=$(T_DIR) $" + data + " $ $1",
		"T_HOST=127.0.0.1",
		"T_LATER=[$(T_DIR)]",
		"T_PATH_REF=$(PATH)",
		"T_SUB=" + data + "/pgdata",
		"T_URL=postgres://alice@127.0.0.1/$(T_UNDEFINED)",
		"T_USER=alice",
		"arg " + data + "/pgdata",
		"arg $(T_SUB)",
		"arg --dir=" + data,
		"arg $(T_NONE)",
	}, "\n") + "\n"
	if diff := cmp.Diff(want, r.Stdout); diff != "" {
		t.Errorf("what the container saw (-want +got):\n%s", diff)
	}
	// The command of a lifecycle hook or probe is not expanded.
	if r := p.Exec("c", []string{"/bin/echo", "$(T_DIR)"}, time.Minute); r.Stdout != "$(T_DIR)\n" {
		t.Errorf("exec printed %q, want $(T_DIR) unexpanded", r.Stdout)
	}
}

// TestProjectedVolume: a projected volume holds its ConfigMap items and the
// service account's token, as the kubelet's token volume does (sealed
// read-only like ConfigMap volumes: readonly_test.go).
func TestProjectedVolume(t *testing.T) {
	h := NewHost(t, "")
	h.AddConfigMap(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": "PEM", "other": "x"}})
	h.ServiceAccountTokens["sa"] = "token-of-sa"
	p := h.Pod("p", corev1.PodSpec{
		ServiceAccountName: "sa",
		Volumes: []corev1.Volume{{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
			{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
		}}}}},
	})
	got := map[string]string{}
	entries, err := os.ReadDir(p.Volume("token"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(p.Volume("token"), e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(raw)
	}
	if diff := cmp.Diff(map[string]string{"token": "token-of-sa", "ca.crt": "PEM"}, got); diff != "" {
		t.Errorf("projected volume files (-want +got):\n%s", diff)
	}
}
