package database

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// shellHarness runs one of the hook's shell scripts with /bin/sh and fake
// pg_isready, pg_dump, psql, sync and sleep first on PATH. Each fake logs its
// arguments to log/<name>; its behaviour comes from FAKE_* variables.
type shellHarness struct {
	dir string
}

var fakeCommands = map[string]string{
	// pg_isready fails FAKE_NOT_READY times, then succeeds.
	"pg_isready": `n=0; [ -e "$LOG/pg_isready.count" ] && read -r n < "$LOG/pg_isready.count"; echo $((n+1)) > "$LOG/pg_isready.count"
[ "$n" -ge "${FAKE_NOT_READY:-0}" ]`,
	// pg_dump writes half a dump, then fails when FAKE_DUMP_FAIL is set.
	"pg_dump": `for a in "$@"; do case "$a" in --file=*) f=${a#--file=};; esac; done
printf 'PGDMP' > "$f"
[ -z "${FAKE_DUMP_FAIL:-}" ] || exit 1
printf ' complete' >> "$f"`,
	// psql keeps its stdin, prints what a failing psql would (the statement
	// with the password in it), and exits FAKE_PSQL_EXIT.
	"psql": `cat > "$LOG/psql.stdin"
echo "ERROR: syntax error at LINE 1: ALTER ROLE CURRENT_USER PASSWORD '$POSTGRES_PASSWORD'" >&2
echo "ALTER ROLE"
exit "${FAKE_PSQL_EXIT:-0}"`,
	"sync":  `:`,
	"sleep": `:`,
}

func newShellHarness(t *testing.T) *shellHarness {
	t.Helper()
	h := &shellHarness{dir: t.TempDir()}
	for _, sub := range []string{"bin", "log", "backups"} {
		if err := os.Mkdir(filepath.Join(h.dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range fakeCommands {
		script := "#!/bin/sh\necho \"$*\" >> \"$LOG/" + name + "\"\n" + body + "\n"
		if err := os.WriteFile(filepath.Join(h.dir, "bin", name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// run runs script and returns its combined output and exit code.
func (h *shellHarness) run(t *testing.T, script string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Env = append([]string{
		"PATH=" + filepath.Join(h.dir, "bin") + ":/usr/bin:/bin",
		"LOG=" + filepath.Join(h.dir, "log"),
		"BACKUP_DIR=" + filepath.Join(h.dir, "backups"),
	}, env...)
	out, err := cmd.CombinedOutput()
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("cannot run /bin/sh: %v", err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

func (h *shellHarness) log(t *testing.T, name string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(h.dir, "log", name))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(raw)), "\n")
}

func (h *shellHarness) backups(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(h.dir, "backups"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func (h *shellHarness) addBackups(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		if err := os.WriteFile(filepath.Join(h.dir, "backups", name), []byte("PGDMP old"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// old are dumps of earlier runs, all older than any the script writes now.
var oldBackups = []string{"20200101T030000Z.dump", "20200102T030000Z.dump", "20200103T030000Z.dump", "20200101T120000Z-final.dump"}

func TestBackupScript(t *testing.T) {
	t.Run("WaitsWritesSyncsPrunes", func(t *testing.T) {
		h := newShellHarness(t)
		h.addBackups(t, oldBackups...)
		out, code := h.run(t, backupScript, "BACKUP_RETENTION=2", "FAKE_NOT_READY=3")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, out)
		}
		if got := len(h.log(t, "pg_isready")); got != 4 {
			t.Errorf("pg_isready ran %d times, want 4: the script must wait for the server before pg_dump", got)
		}
		files := h.backups(t)
		if len(files) != 3 || files[0] != "20200101T120000Z-final.dump" || files[1] != "20200103T030000Z.dump" || !strings.HasSuffix(files[2], "Z.dump") {
			t.Errorf("backups %v, want the final dump (never pruned), the newest old dump and the new one (retention 2), no .partial", files)
		}
		syncs := h.log(t, "sync")
		if len(syncs) != 2 || !strings.HasSuffix(syncs[0], ".dump.partial") || !strings.HasSuffix(syncs[1], "/backups") {
			t.Errorf("sync calls %q, want the dump before the rename and the directory after it", syncs)
		}
	})
	t.Run("FailedDumpLeavesNothing", func(t *testing.T) {
		h := newShellHarness(t)
		h.addBackups(t, oldBackups...)
		out, code := h.run(t, backupScript, "BACKUP_RETENTION=1", "FAKE_DUMP_FAIL=1")
		if code == 0 {
			t.Fatalf("a failed pg_dump must fail the backup: %s", out)
		}
		if diff := slices.Compare(h.backups(t), []string{"20200101T030000Z.dump", "20200101T120000Z-final.dump", "20200102T030000Z.dump", "20200103T030000Z.dump"}); diff != 0 {
			t.Errorf("backups %v: a failed run must leave no .partial file and prune nothing", h.backups(t))
		}
	})
	t.Run("ServerNeverReady", func(t *testing.T) {
		h := newShellHarness(t)
		out, code := h.run(t, backupScript, "BACKUP_RETENTION=1", "FAKE_NOT_READY=1000")
		if code == 0 {
			t.Fatalf("no server: the backup must fail: %s", out)
		}
		if got := len(h.log(t, "pg_isready")); got != 60 {
			t.Errorf("pg_isready ran %d times, want 60 (5 minutes)", got)
		}
		if h.log(t, "pg_dump") != nil {
			t.Error("pg_dump ran without a server")
		}
	})
}

func TestSetPasswordScript(t *testing.T) {
	const password = "s3cret-from-the-secret"
	env := []string{"POSTGRES_USER=app", "POSTGRES_PASSWORD=" + password}
	t.Run("SetsThePasswordQuietly", func(t *testing.T) {
		h := newShellHarness(t)
		out, code := h.run(t, setPasswordScript, append(env, "FAKE_NOT_READY=2", "FAKE_PSQL_EXIT=3")...)
		if code != 0 {
			t.Errorf("exit %d: a postStart failure kills the container; it must always exit 0", code)
		}
		if out != "" {
			t.Errorf("output %q: the hook must print nothing (psql may echo the statement)", out)
		}
		stdin, err := os.ReadFile(filepath.Join(h.dir, "log", "psql.stdin"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(stdin), "ALTER ROLE CURRENT_USER PASSWORD :'pw';") || strings.Contains(string(stdin), password) {
			t.Errorf("psql stdin %q: want the statement with :'pw', never the password itself", stdin)
		}
		for _, want := range []string{"SET log_statement = 'none';", "SET log_min_duration_statement = -1;", "SET log_min_error_statement = 'panic';"} {
			if !strings.Contains(string(stdin), want) {
				t.Errorf("psql stdin %q lacks %q: the server could log the statement", stdin, want)
			}
		}
		args := strings.Join(h.log(t, "psql"), " ")
		for _, want := range []string{"-h /var/run/postgresql", "-U app", "-v ON_ERROR_STOP=1"} {
			if !strings.Contains(args, want) {
				t.Errorf("psql args %q lack %q", args, want)
			}
		}
	})
	t.Run("Bounded", func(t *testing.T) {
		h := newShellHarness(t)
		out, code := h.run(t, setPasswordScript, append(env, "FAKE_NOT_READY=100000")...)
		if code != 0 || out != "" {
			t.Errorf("exit %d, output %q: a server that never answers must end the hook quietly", code, out)
		}
		if got := len(h.log(t, "pg_isready")); got != 600 {
			t.Errorf("pg_isready ran %d times, want 600 (at most 10 minutes)", got)
		}
		if h.log(t, "psql") != nil {
			t.Error("psql ran without a server")
		}
	})
}
