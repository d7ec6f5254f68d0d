package myapp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"metahooks/hooks/kube"
)

func resourceQuantity(t *testing.T, s string) resource.Quantity {
	t.Helper()
	q, err := resource.ParseQuantity(s)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// runScript runs one of the hook's scripts with /bin/sh and the real tar,
// gzip, find and date of the machine, with env only, and returns its combined
// output and exit code. MYAPP_SCRIPT_TOOLS=<dir> runs them with <dir>/sh and
// PATH=<dir> instead: a folder of busybox links tries them with the tools of
// the default backup image.
func runScript(t *testing.T, script string, env ...string) (string, int) {
	t.Helper()
	shell, path := "/bin/sh", "/usr/bin:/bin"
	if dir := os.Getenv("MYAPP_SCRIPT_TOOLS"); dir != "" {
		shell, path = filepath.Join(dir, "sh"), dir
	}
	cmd := exec.Command(shell, "-c", script)
	cmd.Env = append([]string{"PATH=" + path}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		exit, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("cannot run /bin/sh: %v", err)
		}
		return string(out), exit.ExitCode()
	}
	return string(out), 0
}

// writeTree creates files (path -> content) under dir; a path ending in /
// is a directory.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for path, content := range files {
		full := filepath.Join(dir, path)
		if strings.HasSuffix(path, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree lists every file under dir with its mode and content (directories
// as "<path>/ <mode>").
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if info.IsDir() {
			tree[rel+"/"] = info.Mode().String()
			return nil
		}
		raw, err := os.ReadFile(path)
		tree[rel] = info.Mode().String() + " " + string(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

// archiveEnv is the environment archiveCronJob gives the script, with the
// Job of the run scheduled at scheduled.
func archiveEnv(data, backups string, scheduled time.Time, retention int) []string {
	return []string{
		"CRONJOB_NAME=demo-backup-0",
		"JOB_NAME=" + jobName("demo-backup-0", scheduled),
		"DATA_DIR=" + data,
		"BACKUP_DIR=" + backups,
		fmt.Sprintf("BACKUP_RETENTION=%d", retention),
	}
}

var sampleData = map[string]string{
	"app.db":             "rows",
	".hidden":            "dot file",
	"journal/0001.log":   "first",
	"journal/0002.log":   "second",
	"empty/":             "",
	"lost+found/":        "",
	"nested/deep/x.json": `{"a":1}`,
}

func TestArchiveScript(t *testing.T) {
	scheduled := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	data, backups := t.TempDir(), t.TempDir()
	writeTree(t, data, sampleData)
	before := readTree(t, data)

	out, code := runScript(t, archiveScript, archiveEnv(data, backups, scheduled, 7)...)
	if code != 0 {
		t.Fatalf("archive script exited %d:\n%s", code, out)
	}
	if diff := cmp.Diff([]string{"20261201T020000Z.tar.gz"}, listDir(t, backups)); diff != "" {
		t.Errorf("backups volume after one run, named after the scheduled time: -want +got:\n%s\n%s", diff, out)
	}
	if diff := cmp.Diff(before, readTree(t, data)); diff != "" {
		t.Errorf("the archive run changed the data volume: -before +after:\n%s", diff)
	}
	listing, err := exec.Command("tar", "-tzf", filepath.Join(backups, "20261201T020000Z.tar.gz")).Output()
	if err != nil {
		t.Fatalf("tar -tzf of the archive: %v", err)
	}
	for _, want := range []string{"./app.db", "./.hidden", "./journal/0002.log", "./nested/deep/x.json"} {
		if !strings.Contains(string(listing), want+"\n") {
			t.Errorf("archive lacks %s:\n%s", want, listing)
		}
	}
}

func TestArchiveScriptRetention(t *testing.T) {
	data, backups := t.TempDir(), t.TempDir()
	writeTree(t, data, map[string]string{"app.db": "rows"})
	old := []string{"20261120T020000Z.tar.gz", "20261121T020000Z.tar.gz", "20261122T020000Z.tar.gz", "20261123T020000Z.tar.gz"}
	writeTree(t, backups, map[string]string{
		old[0]: "a", old[1]: "b", old[2]: "c", old[3]: "d",
		"notes.txt": "not an archive: never deleted",
	})
	out, code := runScript(t, archiveScript, archiveEnv(data, backups, time.Date(2026, 11, 24, 2, 0, 0, 0, time.UTC), 3)...)
	if code != 0 {
		t.Fatalf("archive script exited %d:\n%s", code, out)
	}
	want := []string{"20261122T020000Z.tar.gz", "20261123T020000Z.tar.gz", "20261124T020000Z.tar.gz", "notes.txt"}
	if diff := cmp.Diff(want, listDir(t, backups)); diff != "" {
		t.Errorf("retention 3 keeps the newest three archives: -want +got:\n%s\n%s", diff, out)
	}
}

func TestArchiveScriptRefuses(t *testing.T) {
	cases := map[string]struct {
		reason  string
		data    map[string]string
		env     func(data, backups string) []string
		wantOut string
	}{
		"RestoreUnfinished": {
			reason:  "an archive of a half-restored volume would pass for a backup",
			data:    map[string]string{"app.db": "half", restoringMarker: ""},
			env:     func(d, b string) []string { return archiveEnv(d, b, time.Now(), 7) },
			wantOut: "a restore into the data volume has not finished",
		},
		"DataUnreadable": {
			reason:  "a data volume that is not there fails the run and leaves no partial file",
			env:     func(d, b string) []string { return archiveEnv(d+"/missing", b, time.Now(), 7) },
			wantOut: "missing",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			data, backups := t.TempDir(), t.TempDir()
			writeTree(t, data, tc.data)
			out, code := runScript(t, archiveScript, tc.env(data, backups)...)
			if code == 0 || !strings.Contains(out, tc.wantOut) {
				t.Errorf("%s\nexit %d, output %q; want a failure saying %q", tc.reason, code, out, tc.wantOut)
			}
			if got := listDir(t, backups); len(got) != 0 {
				t.Errorf("%s\nbackups volume after a refused run: %v, want empty", tc.reason, got)
			}
		})
	}
}

// TestArchiveScriptManualJob: a Job made by hand from the CronJob is not
// named <cronjob>-<minutes>; its archive is named after the current time.
func TestArchiveScriptManualJob(t *testing.T) {
	data, backups := t.TempDir(), t.TempDir()
	writeTree(t, data, map[string]string{"app.db": "rows"})
	env := archiveEnv(data, backups, time.Now(), 7)
	env[1] = "JOB_NAME=demo-backup-0-by-hand"
	before := time.Now().UTC().Truncate(time.Second)
	out, code := runScript(t, archiveScript, env...)
	if code != 0 {
		t.Fatalf("archive script exited %d:\n%s", code, out)
	}
	files := listDir(t, backups)
	if len(files) != 1 {
		t.Fatalf("backups volume %v, want one archive", files)
	}
	stamp, err := parseBackupName(strings.TrimSuffix(files[0], ".tar.gz"))
	if err != nil || stamp.Before(before) || stamp.After(time.Now().Add(time.Second)) {
		t.Errorf("archive %s of a manual Job: %v; want it named after the time of the run (%s)", files[0], err, before.Format(backupStampLayout))
	}
}

func TestBackupCronJobsDefault(t *testing.T) {
	a := parse(t, withSpec(map[string]any{"replicaCount": 3, "backupSchedule": "0 2 * * *"}))
	jobs := backupCronJobs(a, observedFor(t, a, nil), false)
	if len(jobs) != 3 || backupCronJob(a, false) != nil {
		t.Fatalf("default backup of 3 replicas: %d CronJobs and override %v, want 3 and none", len(jobs), backupCronJob(a, false))
	}
	for i, obj := range jobs {
		i := int32(i)
		cj := archiveCronJob(a, i, false)
		if diff := cmp.Diff(obj, any(cj)); diff != "" {
			t.Fatalf("backupCronJobs[%d] is not archiveCronJob(%d): %s", i, i, diff)
		}
		pod := cj.Spec.JobTemplate.Spec.Template.Spec
		want := map[string]any{
			"name":     fmt.Sprintf("demo-backup-%d", i),
			"image":    "busybox:1.37",
			"data":     fmt.Sprintf("data-demo-%d ro=true", i),
			"backups":  fmt.Sprintf("backups-demo-%d ro=false", i),
			"pinnedTo": fmt.Sprintf("demo-%d", i),
			"suspend":  false,
		}
		got := map[string]any{
			"name":     cj.Name,
			"image":    pod.Containers[0].Image,
			"data":     fmt.Sprintf("%s ro=%v", pod.Volumes[0].PersistentVolumeClaim.ClaimName, pod.Volumes[0].PersistentVolumeClaim.ReadOnly),
			"backups":  fmt.Sprintf("%s ro=%v", pod.Volumes[1].PersistentVolumeClaim.ClaimName, pod.Volumes[1].PersistentVolumeClaim.ReadOnly),
			"pinnedTo": pod.Affinity.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].LabelSelector.MatchLabels["statefulset.kubernetes.io/pod-name"],
			"suspend":  *cj.Spec.Suspend,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("CronJob of replica %d: -want +got:\n%s", i, diff)
		}
	}
	if !*archiveCronJob(a, 0, true).Spec.Suspend {
		t.Error("archiveCronJob(finalizing) is not suspended")
	}
}

func TestBackupsVolumeClaim(t *testing.T) {
	schedule := withSpec(map[string]any{"backupSchedule": "0 2 * * *", "storage": map[string]any{"size": "5Gi"}})
	observedWith := kube.ClaimTemplate(backupsVolume, resourceQuantity(t, "3Gi"), nil)
	cases := map[string]struct {
		reason      string
		spec        map[string]any
		templates   []string // "" none observed
		stsObserved bool
		want        string // size of the template, "" none
	}{
		"NoBackup":         {reason: "no schedule, no restore: no backups volume", spec: baseSpec()},
		"NewDefault":       {reason: "a new StatefulSet gets one of the data volume's size", spec: schedule, want: "5Gi"},
		"NewSized":         {reason: "spec.backup.volumeSize", spec: withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"volumeSize": "20Gi"}}), want: "20Gi"},
		"Override":         {reason: "spec.backup.command writes elsewhere", spec: withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"command": []string{"b"}}})},
		"Restore":          {reason: "a restore reads it", spec: withSpec(map[string]any{"restoreFrom": "latest"}), want: "1Gi"},
		"ObservedKept":     {reason: "templates are immutable: the observed one stays, whatever the spec", spec: baseSpec(), templates: []string{"data", "backups"}, stsObserved: true, want: "3Gi"},
		"ObservedWithout":  {reason: "a StatefulSet made without one cannot get one", spec: schedule, templates: []string{"data"}, stsObserved: true},
		"ObservedResizing": {reason: "a new volumeSize does not change the observed template", spec: withSpec(map[string]any{"backupSchedule": "0 2 * * *", "backup": map[string]any{"volumeSize": "20Gi"}}), templates: []string{"data", "backups"}, stsObserved: true, want: "3Gi"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var observed []corev1.PersistentVolumeClaim
			for _, n := range tc.templates {
				if n == backupsVolume {
					observed = append(observed, observedWith)
				} else {
					observed = append(observed, kube.ClaimTemplate(n, resourceQuantity(t, "1Gi"), nil))
				}
			}
			got := backupsVolumeClaim(parse(t, tc.spec), observed, tc.stsObserved)
			gotSize := ""
			if got != nil {
				q := got.Spec.Resources.Requests["storage"]
				gotSize = q.String()
			}
			if gotSize != tc.want {
				t.Errorf("%s\nbackups volume template of size %q, want %q", tc.reason, gotSize, tc.want)
			}
		})
	}
}
