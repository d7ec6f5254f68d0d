package image

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestImage runs `make image` into a temporary folder and reads the tarball
// as `docker load` does (manifest.json, the config, the layers): the
// entrypoint and command are the Dockerfile's, the user is not root, the
// binary is static, and run as the image runs it, `serve` without auth
// flags exits 1 saying what to set.
func TestImage(t *testing.T) {
	dir := t.TempDir()
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "image.tar")
	cmd := exec.Command("make", "-C", repo, "image", "IMAGE_BINARY="+filepath.Join(dir, "metahooks-linux"), "IMAGE_OUT="+out, "VERSION=test")
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, output)
	}
	files := untar(t, readFile(t, out))
	var manifest []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil || len(manifest) != 1 {
		t.Fatalf("manifest.json: %v %q", err, files["manifest.json"])
	}
	if diff := cmp.Diff([]string{"metahooks:test"}, manifest[0].RepoTags); diff != "" {
		t.Errorf("tags -want +got:\n%s", diff)
	}
	var config struct {
		OS, Architecture string
		Config           struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			ExposedPorts map[string]struct{}
		}
	}
	if err := json.Unmarshal(files[manifest[0].Config], &config); err != nil {
		t.Fatalf("config %s: %v", manifest[0].Config, err)
	}
	if config.OS != "linux" || config.Config.User != "65532:65532" {
		t.Errorf("os %q user %q, want linux and 65532:65532 (not root)", config.OS, config.Config.User)
	}
	if diff := cmp.Diff([]string{"/metahooks"}, config.Config.Entrypoint); diff != "" {
		t.Errorf("entrypoint -want +got:\n%s", diff)
	}
	if diff := cmp.Diff([]string{"serve", "--addr", ":8080"}, config.Config.Cmd); diff != "" {
		t.Errorf("command -want +got (the Dockerfile's):\n%s", diff)
	}
	if _, ok := config.Config.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("8080/tcp not exposed: %v", config.Config.ExposedPorts)
	}
	rootfs := map[string][]byte{}
	for _, layer := range manifest[0].Layers {
		for name, data := range untar(t, gunzip(t, files[layer])) {
			rootfs[name] = data
		}
	}
	binary := rootfs["metahooks"]
	if binary == nil {
		t.Fatalf("no /metahooks in the layers: %v", keys(rootfs))
	}
	if !strings.Contains(string(rootfs["etc/passwd"]), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd names no nonroot user 65532: %q", rootfs["etc/passwd"])
	}
	program := filepath.Join(dir, "metahooks")
	if err := os.WriteFile(program, binary, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := elf.Open(program)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range exe.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary needs a dynamic loader: the image has none")
		}
	}
	exe.Close()
	// As the image runs it: the entrypoint with the default command.
	run := exec.Command(program, config.Config.Cmd...)
	run.Dir = dir
	var stderr bytes.Buffer
	run.Stderr = &stderr
	err = run.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("serve without auth flags: %v, want exit 1; stderr %q", err, stderr.String())
	}
	for _, want := range []string{"--auth-token-file", "--client-ca-file"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("serve without auth flags does not say to set %s: %q", want, stderr.String())
		}
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// untar maps the regular files of a tar archive to their contents.
func untar(t *testing.T, archive []byte) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	r := tar.NewReader(bytes.NewReader(archive))
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(h.Name, "/")] = data
	}
}

func gunzip(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
