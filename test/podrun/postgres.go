package podrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PostgresMissing is the message for a machine without PostgreSQL.
const PostgresMissing = "PostgreSQL's server programs are not installed: install Debian's package postgresql " +
	"(make test does it when run as root: hack/postgresql.sh), or set PG_BINDIR to a directory holding initdb, postgres and pg_ctl"

// FindPostgres is the directory of PostgreSQL's programs: $PG_BINDIR, else
// pg_config --bindir, else the newest /usr/lib/postgresql/<major>/bin. It
// must hold initdb, postgres, pg_ctl, psql, pg_dump, pg_dumpall, pg_restore,
// pg_isready, and for the standbys of the failover test pg_basebackup and
// pg_rewind.
func FindPostgres() (string, error) {
	var candidates []string
	if dir := os.Getenv("PG_BINDIR"); dir != "" {
		candidates = append(candidates, dir)
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		candidates = append(candidates, strings.TrimSpace(string(out)))
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	candidates = append(candidates, dirs...)
	for _, dir := range candidates {
		if hasAll(dir, "initdb", "postgres", "pg_ctl", "psql", "pg_dump", "pg_dumpall", "pg_restore", "pg_isready", "pg_basebackup", "pg_rewind") {
			return dir, nil
		}
	}
	return "", errors.New(PostgresMissing)
}

func major(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func hasAll(dir string, tools ...string) bool {
	for _, tool := range tools {
		if fi, err := os.Stat(filepath.Join(dir, tool)); err != nil || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// RequirePostgres is FindPostgres, failing t (never skipping it) when
// PostgreSQL is missing.
func RequirePostgres(t testing.TB) string {
	t.Helper()
	dir, err := FindPostgres()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// FreePort is a TCP port of 127.0.0.1 that the OS just handed out and that
// nothing listens on.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Client connects to a server on 127.0.0.1 with psql, as the test's user.
type Client struct {
	BinDir         string
	Port           int
	User, Password string
	Database       string
}

// Query runs sql with psql over TCP (unaligned, tuples only, stopping at the
// first error) and returns its output, or an error with psql's messages.
func (c Client) Query(sql string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.BinDir, "psql"), "--no-psqlrc", "-X", "-q", "-A", "-t",
		"-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port), "-U", c.User, "-d", c.Database)
	cmd.Env = []string{"PGPASSWORD=" + c.Password, "PGSSLMODE=disable", "PGCONNECT_TIMEOUT=10", "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(sql)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("psql as %s: %v: %s", c.User, err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// MustQuery is Query that fails the test on an error.
func (c Client) MustQuery(t testing.TB, sql string) string {
	t.Helper()
	out, err := c.Query(sql)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// WaitReady waits at most timeout for the server to accept connections.
func (c Client) WaitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		cmd := exec.Command(filepath.Join(c.BinDir, "pg_isready"), "-q", "-h", "127.0.0.1", "-p", strconv.Itoa(c.Port))
		if cmd.Run() == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no server on 127.0.0.1:%d after %s", c.Port, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
