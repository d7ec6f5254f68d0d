package load

import (
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain doubles as a tiny server for TestStart: with LOAD_TEST_SERVE set,
// the test binary serves that address instead of running tests.
func TestMain(m *testing.M) {
	if addr := os.Getenv("LOAD_TEST_SERVE"); addr != "" {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			os.Exit(3)
		}
		_ = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStartServesAndStops(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("FreeAddr = %q, want a 127.0.0.1 address", addr)
	}
	s, err := Start("self", []string{os.Args[0]}, []string{"LOAD_TEST_SERVE=" + addr}, addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop() })
	res, err := Run(Target{Addr: addr, Path: "/"}, Options{Concurrency: 2, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != 0 {
		t.Errorf("Run against the started server = %v, want requests and no errors", res)
	}
	rss, err := s.PeakRSS()
	if err != nil || rss < 1<<20 {
		t.Errorf("PeakRSS = %d, %v; want at least 1 MiB", rss, err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		_ = c.Close()
		t.Errorf("%s still accepts connections after Stop", addr)
	}
}

func TestStartFailsWhenTheProgramExits(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Start("false", []string{"false"}, nil, addr, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "exited before serving") {
		t.Errorf("Start(false) error = %v, want it to say the program exited", err)
	}
}

func TestParseVmHWM(t *testing.T) {
	for _, tc := range []struct {
		reason, status string
		want           int64
		wantErr        bool
	}{
		{"kB converted to bytes", "Name:\tx\nVmPeak:\t  9000 kB\nVmHWM:\t    1234 kB\nVmRSS:\t 1000 kB\n", 1234 << 10, false},
		{"no such line", "Name:\tx\n", 0, true},
		{"unknown unit", "VmHWM:\t 12 MB\n", 0, true},
	} {
		got, err := parseVmHWM([]byte(tc.status))
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: parseVmHWM = %d, %v; want %d, error %v", tc.reason, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestPeakRSSOfThisProcess(t *testing.T) {
	rss, err := PeakRSS(os.Getpid())
	if err != nil || rss < 1<<20 {
		t.Errorf("PeakRSS(self) = %d, %v; want at least 1 MiB", rss, err)
	}
}

func TestParseStatCPU(t *testing.T) {
	for _, tc := range []struct {
		reason, stat string
		want         time.Duration
		wantErr      bool
	}{
		{"utime 150 + stime 50 ticks", "42 (metahooks) S 1 42 42 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 7 0 100 1000 200", 2 * time.Second, false},
		{"a command name with spaces and parentheses", "42 (a (b) c) R 1 42 42 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 1 1", 30 * time.Millisecond, false},
		{"truncated", "42 (x) S 1 2", 0, true},
		{"no command", "garbage", 0, true},
	} {
		got, err := parseStatCPU([]byte(tc.stat))
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("%s: parseStatCPU = %v, %v; want %v, error %v", tc.reason, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestCPUTimeOfThisProcessGrows(t *testing.T) {
	before, err := CPUTime(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for time.Now().Before(deadline) {
		for i := range 1 << 20 {
			x += i
		}
		if now, _ := CPUTime(os.Getpid()); now > before {
			return
		}
	}
	t.Errorf("CPU time stayed at %v over 5 s of busy work (%d)", before, x)
}
