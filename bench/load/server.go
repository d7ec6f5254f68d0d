package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FreeAddr returns a 127.0.0.1 address with a port the OS just reported free.
// Another process may take it before the server binds it; Start then fails
// and the caller may try again.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("cannot pick a free port: %w", err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", err
	}
	return addr, nil
}

// Server is a server process started by Start.
type Server struct {
	Name string // for messages: "metahooks", "floor", ...
	Addr string // host:port it serves on
	cmd  *exec.Cmd
	out  *tailBuffer
	done chan struct{}
	err  error // Wait's result, set before done closes
}

// Start runs argv (argv[0] is the program) with env added to this process's
// environment, and waits until addr accepts TCP connections (at most
// timeout). The process's output is kept (its last 8 KiB) for Output.
func Start(name string, argv []string, env []string, addr string, timeout time.Duration) (*Server, error) {
	if len(argv) == 0 {
		return nil, errors.New("load.Start: no command")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out := &tailBuffer{limit: 8 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", name, err)
	}
	s := &Server{Name: name, Addr: addr, cmd: cmd, out: out, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("%s exited before serving on %s (%v): %s", name, addr, s.err, out.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = s.Stop()
			return nil, fmt.Errorf("%s did not serve on %s within %s: %s", name, addr, timeout, out.String())
		}
	}
}

// PID is the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// PeakRSS is the server's peak resident set size so far (VmHWM), in bytes.
func (s *Server) PeakRSS() (int64, error) { return PeakRSS(s.PID()) }

// Output is the last 8 KiB the server wrote to stdout and stderr.
func (s *Server) Output() string { return s.out.String() }

// Stop sends SIGTERM, waits up to 10 s, then kills the process. It is safe
// to call more than once.
func (s *Server) Stop() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(10 * time.Second):
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	return fmt.Errorf("%s did not stop within 10 s of SIGTERM and was killed", s.Name)
}

// CPUTime is the CPU time the server has used so far, user and system, all
// threads.
func (s *Server) CPUTime() (time.Duration, error) { return CPUTime(s.PID()) }

// CPUTime reads the user and system CPU time of process pid (all its
// threads) from /proc/<pid>/stat. It is counted in clock ticks (10 ms on
// Linux), so measure over seconds, not milliseconds. On a machine shared with
// other work, CPU time per request is steadier than requests per second.
func CPUTime(pid int) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("cannot read CPU time: %w", err)
	}
	return parseStatCPU(raw)
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

func parseStatCPU(stat []byte) (time.Duration, error) {
	// "pid (comm) state ppid ...": comm may hold spaces and parentheses,
	// so fields are counted after the last ')'.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, errors.New("malformed /proc/<pid>/stat")
	}
	fields := strings.Fields(string(stat[end+1:]))
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, errors.New("malformed /proc/<pid>/stat")
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc/<pid>/stat")
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// PeakRSS reads VmHWM (peak resident set size) of process pid from
// /proc/<pid>/status, in bytes.
func PeakRSS(pid int) (int64, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("cannot read peak RSS: %w", err)
	}
	return parseVmHWM(raw)
}

func parseVmHWM(status []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("unexpected VmHWM line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unexpected VmHWM line %q", sc.Text())
		}
		return kb << 10, nil
	}
	return 0, errors.New("no VmHWM line in /proc/<pid>/status")
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
