// Command instructions is the steady part of `make bench`: it counts the
// instructions the serving binary, and the HTTP floor, run per request
// under valgrind's callgrind, for a fixed number of requests sent one after
// the other on one connection.
//
//	go run ./bench/instructions -metahooks bin/metahooks -floor bin/floor
//
// Requests/s on this project's shared 2-core machines move by a fifth from
// one minute to the next, more than most changes a commit makes; the count
// of the same binary and requests moves by a tenth of a percent, so it is
// the figure to compare two builds by. It is not time: callgrind counts
// user-space instructions only (no kernel, no memory stalls), and code
// that picks its instructions by the CPU runs what valgrind offers (the
// ETag's BLAKE3 its AVX2 code, about 3 instructions a byte; SHA-256, which
// it used before, ran without the SHA extensions at about 31). So compare
// counts with counts, never turn one into time.
//
// Each server runs under valgrind with GOMAXPROCS=1 (the scheduler's idle
// spinning, which depends on timing, stays out of the count) and
// GODEBUG=asyncpreemptoff=1 (callgrind cannot take Go's preemption
// signals). The count of a scenario is callgrind's total between a dump
// after the warm-up and one after the measured requests, divided by them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"metahooks/bench/load"
)

type config struct {
	metahooks, floor       string
	bodies                 load.Requests
	deployment             string
	requests, warmup       int
	valgrind, callgrindCtl string
}

func main() {
	var cfg config
	flag.StringVar(&cfg.metahooks, "metahooks", "bin/metahooks", "metahooks binary to count")
	flag.StringVar(&cfg.floor, "floor", "bin/floor", "floor server binary (go build ./bench/floor)")
	cfg.bodies.Register(flag.CommandLine)
	flag.StringVar(&cfg.deployment, "deployment", "deploy/deployment.yaml", "the Deployment whose limits.memory metahooks runs with as GOMEMLIMIT")
	flag.IntVar(&cfg.requests, "requests", 1000, "requests counted per scenario (a Database sync: a quarter as many)")
	flag.IntVar(&cfg.warmup, "warmup", 200, "requests sent before counting")
	flag.StringVar(&cfg.valgrind, "valgrind", "valgrind", "valgrind binary")
	flag.StringVar(&cfg.callgrindCtl, "callgrind-control", "callgrind_control", "callgrind_control binary")
	flag.Parse()
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "instructions:", err)
		os.Exit(1)
	}
}

// scenario is one server and request to count.
type scenario struct {
	name     string
	argv     func(addr string) []string
	env      []string
	target   func(addr string) (load.Target, error)
	requests int
}

func run(cfg config, out io.Writer) error {
	for _, tool := range []string{cfg.valgrind, cfg.callgrindCtl} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not installed (Debian: apt-get install valgrind): %w", tool, err)
		}
	}
	if err := cfg.bodies.Read(); err != nil {
		return err
	}
	myappBody, databaseBody := cfg.bodies.MyApp, cfg.bodies.Database
	limit, err := load.DeploymentMemoryLimit(cfg.deployment)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "instructions-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	serveArgs, authorization, err := load.ServeFlags(cfg.metahooks, tmp)
	if err != nil {
		return err
	}
	header := map[string]string{}
	if authorization != "" {
		header["Authorization"] = authorization
	}
	hooks := func(addr string) []string {
		return append([]string{cfg.metahooks, "serve", "--addr", addr, "--shutdown-delay", "0s"}, serveArgs...)
	}
	hooksEnv := []string{fmt.Sprintf("GOMEMLIMIT=%d", limit)}
	post := func(path string, body []byte) func(string) (load.Target, error) {
		return func(addr string) (load.Target, error) {
			return load.Target{Addr: addr, Path: path, Body: body, Header: header}, nil
		}
	}
	scenarios := []scenario{
		{name: "floor, MyApp request", requests: cfg.requests,
			argv:   func(addr string) []string { return []string{cfg.floor, "-addr", addr, "-answer-bytes", "2678"} },
			target: post("/hooks/myapp/sync", myappBody)},
		{name: "metahooks MyApp sync", requests: cfg.requests, argv: hooks, env: hooksEnv, target: post("/hooks/myapp/sync", myappBody)},
		{name: "metahooks ETag hit (412)", requests: cfg.requests, argv: hooks, env: hooksEnv,
			target: func(addr string) (load.Target, error) {
				_, etag, err := load.Probe(load.Target{Addr: addr, Path: "/hooks/myapp/sync", Body: myappBody, Header: header})
				if err != nil {
					return load.Target{}, err
				}
				h := map[string]string{"If-None-Match": etag}
				for k, v := range header {
					h[k] = v
				}
				return load.Target{Addr: addr, Path: "/hooks/myapp/sync", Body: myappBody, Header: h, WantStatus: http.StatusPreconditionFailed}, nil
			}},
		{name: "metahooks Database sync", requests: max(cfg.requests/4, 1), argv: hooks, env: hooksEnv, target: post("/hooks/database/sync", databaseBody)},
	}
	fmt.Fprintf(out, "instructions per request under callgrind (valgrind), %d warm-up requests, then the counted ones, one connection\n", cfg.warmup)
	fmt.Fprintf(out, "requests: MyApp %s (%d B compact); Database %s (%d B compact)\n\n", cfg.bodies.MyAppFile, len(myappBody), cfg.bodies.DatabaseFile, len(databaseBody))
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "scenario\trequests\tinstructions/request\t")
	var floor float64
	for i, s := range scenarios {
		perRequest, err := count(cfg, tmp, i, s)
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		if i == 0 {
			floor = perRequest
		}
		fmt.Fprintf(w, "%s\t%d\t%.0f\t\n", s.name, s.requests, perRequest)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\n(the floor's count is %.0f; the ETag's BLAKE3 of a request body, in each sync row, is about 3 instructions a byte here;\n an ETag hit whose body was remembered compares it with the remembered copy instead of hashing it)\n", floor)
	return nil
}

// count runs scenario s under callgrind and returns its instructions per
// counted request.
func count(cfg config, tmp string, n int, s scenario) (float64, error) {
	addr, err := load.FreeAddr()
	if err != nil {
		return 0, err
	}
	outFile := filepath.Join(tmp, fmt.Sprintf("callgrind-%d.out", n))
	argv := append([]string{cfg.valgrind, "--tool=callgrind", "--callgrind-out-file=" + outFile}, s.argv(addr)...)
	env := append([]string{"GOMAXPROCS=1", "GODEBUG=asyncpreemptoff=1"}, s.env...)
	server, err := load.Start(s.name, argv, env, addr, 5*time.Minute) // valgrind starts a Go binary slowly
	if err != nil {
		return 0, err
	}
	defer server.Stop() // callgrind dies of the signal; its dumps are written by then
	target, err := s.target(addr)
	if err != nil {
		return 0, err
	}
	if err := load.Send(target, cfg.warmup); err != nil {
		return 0, err
	}
	if err := dump(cfg, server.PID(), outFile+".1"); err != nil {
		return 0, err
	}
	if err := load.Send(target, s.requests); err != nil {
		return 0, err
	}
	if err := dump(cfg, server.PID(), outFile+".2"); err != nil {
		return 0, err
	}
	total, err := summary(outFile + ".2")
	if err != nil {
		return 0, err
	}
	return float64(total) / float64(s.requests), nil
}

// dump has callgrind write what it counted since its last dump (and zero
// its counters), and waits until the file is there.
func dump(cfg config, pid int, file string) error {
	if out, err := exec.Command(cfg.callgrindCtl, "-d", strconv.Itoa(pid)).CombinedOutput(); err != nil {
		return fmt.Errorf("%s -d: %w: %s", cfg.callgrindCtl, err, out)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := summary(file); err == nil {
			return nil
		}
	}
	return fmt.Errorf("no callgrind dump %s within a minute", file)
}

// summary reads the instruction total of a callgrind dump: its "summary:"
// line, written once the dump's figures are complete.
func summary(file string) (int64, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if value, ok := strings.CutPrefix(line, "summary: "); ok {
			return strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		}
	}
	return 0, errors.New("no summary line yet")
}
