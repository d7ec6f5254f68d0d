package readme

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// command is one shell command of a README block (continuation lines
// joined) and, when the README prints it, the output it shows: the comment
// lines right after it.
type command struct {
	line   string
	output string
}

// commands splits the sh block after heading in README.md into commands.
func commands(t *testing.T, readme, heading string) []command {
	t.Helper()
	_, section, found := strings.Cut(readme, "\n"+heading+"\n")
	if !found {
		t.Fatalf("README.md has no %q", heading)
	}
	_, block, found := strings.Cut(section, "```sh\n")
	block, _, closed := strings.Cut(block, "\n```")
	if !found || !closed {
		t.Fatalf("%s: no sh block", heading)
	}
	var out []command
	afterCommand := false
	var pending strings.Builder
	for _, line := range strings.Split(block, "\n") {
		switch {
		case pending.Len() > 0:
			pending.WriteString("\n" + line)
			if !strings.HasSuffix(line, `\`) {
				out = append(out, command{line: pending.String()})
				pending.Reset()
				afterCommand = true
			}
		case strings.HasPrefix(line, "#"):
			if afterCommand {
				c := &out[len(out)-1]
				c.output = strings.TrimSpace(c.output + "\n" + strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
			}
		case strings.TrimSpace(line) == "":
			afterCommand = false
		default:
			if strings.HasSuffix(line, `\`) {
				pending.WriteString(line)
				continue
			}
			out = append(out, command{line: line})
			afterCommand = true
		}
	}
	return out
}

// TestCurlCommands: README.md's "Try the hooks with curl" and "Render
// without a cluster", every command exactly as printed, against `make run`
// as the README starts it; each must exit 0 with output, and print what the
// README shows where it shows it (issue 31).
func TestCurlCommands(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(repo, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := commands(t, string(readme), "## Try the hooks with curl")
	if len(cmds) < 8 {
		t.Fatalf("only %d curl commands found: %v", len(cmds), cmds)
	}
	renders := commands(t, string(readme), "## Render without a cluster")
	if len(renders) < 6 {
		t.Fatalf("only %d render commands found: %v", len(renders), renders)
	}
	cmds = append(cmds, renders...) // bin/metahooks and the dev key: make run made them
	for _, tool := range []string{"curl", "jq", "make", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: the README's commands need it", tool)
		}
	}
	for _, addr := range []string{"127.0.0.1:8080", "127.0.0.1:9090"} {
		if l, err := net.Listen("tcp", addr); err != nil {
			t.Fatalf("%s is taken: make run serves there as README says (%v)", addr, err)
		} else {
			l.Close()
		}
	}
	run := exec.Command("make", "run")
	run.Dir = repo
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logFile, err := os.Create(filepath.Join(t.TempDir(), "make-run.log"))
	if err != nil {
		t.Fatal(err)
	}
	run.Stdout, run.Stderr = logFile, logFile
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-run.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = run.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-run.Process.Pid, syscall.SIGKILL)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a cold build on a loaded machine
	defer cancel()
	for {
		if resp, err := http.Get("http://localhost:9090/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if ctx.Err() != nil {
			log, _ := os.ReadFile(logFile.Name())
			t.Fatalf("make run not ready within 5 minutes:\n%s", log)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, c := range cmds {
		sh := exec.Command("bash", "-o", "pipefail", "-c", c.line)
		sh.Dir = repo
		out, err := sh.CombinedOutput()
		got := strings.TrimSpace(string(out))
		var exit *exec.ExitError
		if errors.As(err, &exit) || err != nil {
			t.Errorf("%s\nfailed: %v\n%s", c.line, err, got)
			continue
		}
		if got == "" {
			t.Errorf("%s\nprinted nothing", c.line)
		}
		if c.output != "" && got != c.output {
			t.Errorf("%s\nprinted %q\nREADME shows %q", c.line, got, c.output)
		}
		t.Logf("%s\n%s", firstLine(c.line), firstLines(got, 3))
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func firstLines(s string, n int) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	for i := 0; i < n && sc.Scan(); i++ {
		b.WriteString("  " + sc.Text() + "\n")
	}
	return b.String()
}
