package api_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGeneratedFilesAreFresh runs hack/generate.sh into a temporary folder and
// compares its output byte for byte with the checked-in CRDs (deploy/crds) and
// deepcopy code (api/<version>/zz_generated.deepcopy.go). It fails when a
// marker or a type changed without `make generate`.
func TestGeneratedFilesAreFresh(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs controller-gen")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "hack", "generate.sh"))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GENERATE_OUTPUT_DIR="+out)
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/generate.sh: %v\n%s", err, output)
	}

	generated := listFiles(t, out)
	if len(generated) == 0 {
		t.Fatal("hack/generate.sh wrote nothing")
	}
	// What the repo holds that generate.sh owns: every deploy/crds/*.yaml and
	// every api/*/zz_generated.deepcopy.go.
	var checkedIn []string
	for _, pattern := range []string{"deploy/crds/*.yaml", "api/*/zz_generated.deepcopy.go"} {
		matches, err := filepath.Glob(filepath.Join(root, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range matches {
			rel, _ := filepath.Rel(root, m)
			checkedIn = append(checkedIn, filepath.ToSlash(rel))
		}
	}
	slices.Sort(checkedIn)

	var stale []string
	for _, rel := range generated {
		want, err := os.ReadFile(filepath.Join(out, rel))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(root, rel))
		switch {
		case err != nil:
			t.Errorf("%s: missing from the repo (%v)", rel, err)
			stale = append(stale, rel)
		case !bytes.Equal(got, want):
			t.Errorf("%s differs from what hack/generate.sh produces:\n%s", rel,
				diffHint("checked-in", "generated", filepath.Join(root, rel), filepath.Join(out, rel), got, want))
			stale = append(stale, rel)
		}
	}
	for _, rel := range checkedIn {
		if !slices.Contains(generated, rel) {
			t.Errorf("%s: checked in, but hack/generate.sh no longer produces it", rel)
			stale = append(stale, rel)
		}
	}
	if len(stale) > 0 {
		t.Errorf("generated files are stale: %s\nrun `make generate` (hack/generate.sh) and commit the result", strings.Join(stale, ", "))
	}
}

// TestKustomizationListsEveryCRD keeps deploy/kustomization.yaml in step with
// deploy/crds, so `kubectl apply -k deploy` installs every generated CRD.
func TestKustomizationListsEveryCRD(t *testing.T) {
	kustomization, err := os.ReadFile(filepath.Join("..", "deploy", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	crds, err := filepath.Glob(filepath.Join("..", "deploy", "crds", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(crds) == 0 {
		t.Fatal("deploy/crds holds no CRD")
	}
	for _, crd := range crds {
		entry := "- crds/" + filepath.Base(crd) + "\n"
		if !bytes.Contains(kustomization, []byte(entry)) {
			t.Errorf("deploy/kustomization.yaml does not list %q under resources", strings.TrimSpace(entry))
		}
	}
}

// TestTopLevelCompositeControllerIsDeploys checks that compositecontroller.yaml
// at the top of the repo says what deploy/compositecontroller.yaml says. The
// former is a symlink to the latter (kustomize refuses files outside deploy/),
// and a tool that rewrites the symlink as a plain file (sed -i does) must not
// let the two drift apart.
func TestTopLevelCompositeControllerIsDeploys(t *testing.T) {
	top, err := os.ReadFile(filepath.Join("..", "compositecontroller.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	deploy, err := os.ReadFile(filepath.Join("..", "deploy", "compositecontroller.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(top, deploy) {
		t.Errorf("compositecontroller.yaml differs from deploy/compositecontroller.yaml:\n%s\nedit deploy/compositecontroller.yaml and restore the symlink: ln -sfn deploy/compositecontroller.yaml compositecontroller.yaml",
			diffHint("compositecontroller.yaml", "deploy/compositecontroller.yaml",
				filepath.Join("..", "compositecontroller.yaml"), filepath.Join("..", "deploy", "compositecontroller.yaml"), top, deploy))
	}
}

func listFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// diffHint shows how file got differs from file want: `diff -u` when it is
// installed, else the first differing line.
func diffHint(gotLabel, wantLabel, gotPath, wantPath string, got, want []byte) string {
	if _, err := exec.LookPath("diff"); err == nil {
		// diff exits 1 when the files differ; its output is what matters.
		output, _ := exec.Command("diff", "-u", "--label", gotLabel, "--label", wantLabel, gotPath, wantPath).Output()
		if len(output) > 0 {
			lines := strings.SplitAfter(string(output), "\n")
			if len(lines) > 60 {
				lines = append(lines[:60], fmt.Sprintf("... (%d more lines)\n", len(lines)-60))
			}
			return strings.Join(lines, "")
		}
	}
	gotLines, wantLines := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gotLines), len(wantLines)); i++ {
		var g, w string
		if i < len(gotLines) {
			g = gotLines[i]
		}
		if i < len(wantLines) {
			w = wantLines[i]
		}
		if g != w {
			return fmt.Sprintf("first difference at line %d:\n  %s: %q\n  %s: %q", i+1, gotLabel, g, wantLabel, w)
		}
	}
	return "the files differ"
}
