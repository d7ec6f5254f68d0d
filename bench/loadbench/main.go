// Command loadbench is the load benchmark of `make bench`: it starts the real
// metahooks binary, the HTTP floor (bench/floor) and the Python-style peer
// hook (../shared/bench/peer_hook.py) on loopback ports, drives each with the
// same request at a fixed concurrency, and prints requests/s, p50, p99, peak
// RSS and the ratios the performance targets are stated in.
//
//	go build -o bin/metahooks ./server && go build -o bin/floor ./bench/floor
//	go run ./bench/loadbench -metahooks bin/metahooks -floor bin/floor
//
// Besides requests/s and latency it reads each server's CPU time per request
// from /proc, the steadier figure when other work shares the machine.
//
// Scenarios are measured in rounds, one after the other in each round (in
// reverse order every other round, so that no scenario always runs first),
// and a row's requests/s, latency and CPU figures are its round with the
// median requests/s, so that a burst of other work on a shared machine skews
// one round rather than one scenario. A ratio to the floor is taken within
// each round (each server runs next to its floor) and the median of those is
// shown with their range. Each run also
// records the share of the machine's CPU time the hypervisor stole during
// it (/proc/stat), which on a shared virtual machine moves every figure: a
// run with more than 5% stolen is not trusted. Figures and verdicts come
// from the trusted runs when there are any; rounds go on (up to three times
// -rounds) until each compared pair has -rounds trusted rounds; a verdict
// resting on an untrusted run is UNSURE.
package main

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"metahooks/bench/load"
)

type config struct {
	metahooks, floor    string
	python, peer        string
	requests            load.Requests
	deployment          string
	concurrency, rounds int
	warmup, duration    time.Duration
}

func main() {
	var cfg config
	flag.StringVar(&cfg.metahooks, "metahooks", "bin/metahooks", "metahooks binary to measure")
	flag.StringVar(&cfg.floor, "floor", "bin/floor", "floor server binary (go build ./bench/floor)")
	flag.StringVar(&cfg.python, "python", "python3", "Python interpreter for the peer hook; empty skips it")
	flag.StringVar(&cfg.peer, "peer", "../shared/bench/peer_hook.py", "the Python-style MyApp hook")
	cfg.requests.Register(flag.CommandLine)
	flag.StringVar(&cfg.deployment, "deployment", "deploy/deployment.yaml", "the Deployment whose limits.memory metahooks runs with as GOMEMLIMIT, as in a cluster")
	flag.IntVar(&cfg.concurrency, "concurrency", 16, "connections, one request in flight on each")
	flag.IntVar(&cfg.rounds, "rounds", 3, "rounds of every scenario; the median round is reported")
	flag.DurationVar(&cfg.warmup, "warmup", 500*time.Millisecond, "warm-up before each measured run")
	flag.DurationVar(&cfg.duration, "duration", 3*time.Second, "measured time of each run")
	flag.Parse()
	if err := run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "loadbench:", err)
		os.Exit(1)
	}
}

// scenario is one server and request to drive.
type scenario struct {
	name   string
	target load.Target
	server *load.Server
	floor  string // name of the floor scenario it is compared with
	// fixedRate: sent at a set rate, so requests/s says nothing of the
	// server and its rounds are ranked by p99.
	fixedRate bool
	rounds    []measured
}

// measured is one run, with the CPU time the server spent per request in it.
type measured struct {
	load.Result
	cpuPerRequest time.Duration
	steal         float64 // share of the machine's CPU time stolen during the run
}

// measure warms up, then runs opts measuring the server's CPU time too.
func measure(s *scenario, opts load.Options) (measured, error) {
	if opts.Warmup > 0 {
		warm := opts
		warm.Duration, warm.Warmup = opts.Warmup, 0
		if _, err := load.Run(s.target, warm); err != nil {
			return measured{}, err
		}
		opts.Warmup = 0
	}
	before, err := s.server.CPUTime()
	if err != nil {
		return measured{}, err
	}
	machineBefore, err := load.ReadMachineTicks()
	if err != nil {
		return measured{}, err
	}
	r, err := load.Run(s.target, opts)
	if err != nil {
		return measured{}, err
	}
	if r.Errors > 0 {
		return measured{}, fmt.Errorf("%d errors, first: %s\n%s", r.Errors, r.FirstError, s.server.Output())
	}
	after, err := s.server.CPUTime()
	if err != nil {
		return measured{}, err
	}
	machineAfter, err := load.ReadMachineTicks()
	if err != nil {
		return measured{}, err
	}
	m := measured{Result: r, steal: machineAfter.StealSince(machineBefore)}
	if r.Requests > 0 {
		m.cpuPerRequest = (after - before) / time.Duration(r.Requests)
	}
	return m, nil
}

func run(cfg config, out io.Writer) error {
	if err := cfg.requests.Read(); err != nil {
		return err
	}
	myappBody, databaseBody := cfg.requests.MyApp, cfg.requests.Database
	tmp, err := os.MkdirTemp("", "loadbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var servers []*load.Server
	defer func() {
		for _, s := range servers {
			_ = s.Stop()
		}
	}()
	limit, err := load.DeploymentMemoryLimit(cfg.deployment)
	if err != nil {
		return err
	}
	start := func(name string, env []string, argv func(addr string) []string) (*load.Server, error) {
		addr, err := load.FreeAddr()
		if err != nil {
			return nil, err
		}
		s, err := load.Start(name, argv(addr), env, addr, 20*time.Second)
		if err != nil {
			return nil, err
		}
		servers = append(servers, s)
		return s, nil
	}

	serveArgs, authorization, err := load.ServeFlags(cfg.metahooks, tmp)
	if err != nil {
		return err
	}
	header := map[string]string{}
	if authorization != "" {
		header["Authorization"] = authorization
	}
	hooks, err := start("metahooks", []string{fmt.Sprintf("GOMEMLIMIT=%d", limit)}, func(addr string) []string {
		return append([]string{cfg.metahooks, "serve", "--addr", addr, "--shutdown-delay", "0s"}, serveArgs...)
	})
	if err != nil {
		return err
	}
	myappTarget := load.Target{Addr: hooks.Addr, Path: "/hooks/myapp/sync", Body: myappBody, Header: header}
	databaseTarget := load.Target{Addr: hooks.Addr, Path: "/hooks/database/sync", Body: databaseBody, Header: header}
	myappAnswer, etag, err := load.Probe(myappTarget)
	if err != nil {
		return fmt.Errorf("metahooks MyApp sync: %w", err)
	}
	databaseAnswer, _, err := load.Probe(databaseTarget)
	if err != nil {
		return fmt.Errorf("metahooks Database sync: %w", err)
	}

	myappFloor, err := start("floor", nil, func(addr string) []string {
		return []string{cfg.floor, "-addr", addr, "-answer-bytes", fmt.Sprint(myappAnswer)}
	})
	if err != nil {
		return err
	}
	databaseFloor, err := start("floor", nil, func(addr string) []string {
		return []string{cfg.floor, "-addr", addr, "-answer-bytes", fmt.Sprint(databaseAnswer)}
	})
	if err != nil {
		return err
	}

	scenarios := []*scenario{
		{name: "floor, MyApp request", server: myappFloor, target: load.Target{Addr: myappFloor.Addr, Path: "/hooks/myapp/sync", Body: myappBody, Header: header}},
		{name: "metahooks MyApp sync", server: hooks, target: myappTarget, floor: "floor, MyApp request"},
		{name: "metahooks ETag hit (412)", server: hooks, target: load.Target{Addr: hooks.Addr, Path: "/hooks/myapp/sync", Body: myappBody, Header: with(header, "If-None-Match", etag), WantStatus: 412}, floor: "floor, MyApp request"},
		{name: "floor, Database request", server: databaseFloor, target: load.Target{Addr: databaseFloor.Addr, Path: "/hooks/database/sync", Body: databaseBody, Header: header}},
		{name: "metahooks Database sync", server: hooks, target: databaseTarget, floor: "floor, Database request"},
	}
	var peer *scenario
	if cfg.python != "" {
		if _, err := exec.LookPath(cfg.python); err != nil {
			fmt.Fprintf(out, "no %s: the Python peer hook is not measured\n", cfg.python)
		} else {
			py, err := start("python peer", nil, func(addr string) []string {
				_, port, _ := net.SplitHostPort(addr)
				return []string{cfg.python, cfg.peer, port}
			})
			if err != nil {
				return err
			}
			peer = &scenario{name: "python peer hook, MyApp", server: py, target: load.Target{Addr: py.Addr, Path: "/hooks/myapp/sync", Body: myappBody, Header: header}, floor: "floor, MyApp request"}
			// First: the hooks then run right next to their floors.
			scenarios = append([]*scenario{peer}, scenarios...)
		}
	}

	fmt.Fprintf(out, "load benchmark: %d connections, %d rounds of %s (after %s warm-up) per scenario, up to %d while runs have over 5%% stolen, median trusted round shown\n",
		cfg.concurrency, cfg.rounds, cfg.duration, cfg.warmup, 3*cfg.rounds)
	fmt.Fprintf(out, "machine: %d CPUs, %s/%s, load average before: %s\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, loadAverage())
	fmt.Fprintf(out, "metahooks: GOMEMLIMIT=%d (%s limits.memory) %s serve %s (secrets shown as files in a temporary folder)\n", limit, cfg.deployment, cfg.metahooks, strings.Join(serveArgs, " "))
	fmt.Fprintf(out, "requests: MyApp %s (%d B compact, answer %d B); Database %s (%d B compact, answer %d B)\n",
		cfg.requests.MyAppFile, len(myappBody), myappAnswer, cfg.requests.DatabaseFile, len(databaseBody), databaseAnswer)
	opts := load.Options{Concurrency: cfg.concurrency, Warmup: cfg.warmup, Duration: cfg.duration}
	byName := map[string]*scenario{}
	for _, s := range scenarios {
		byName[s.name] = s
	}
	myapp := byName["metahooks MyApp sync"]
	var compared [][2]*scenario // the pairs the targets compare
	for _, s := range scenarios {
		if f := byName[s.floor]; f != nil {
			compared = append(compared, [2]*scenario{s, f})
		}
	}
	if peer != nil {
		compared = append(compared, [2]*scenario{myapp, peer})
	}
	// Rounds go on past cfg.rounds, up to three times as many, until every
	// compared pair has cfg.rounds rounds with both runs trusted.
	for round := 0; round < cfg.rounds || (round < 3*cfg.rounds && !enoughTrusted(compared, cfg.rounds)); round++ {
		for _, s := range inRoundOrder(scenarios, round) {
			m, err := measure(s, opts)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			s.rounds = append(s.rounds, m)
		}
	}
	peak := myapp.shown()
	// The floor at the same rate, each round right after the hook: on a
	// shared virtual machine the tail at a low rate is mostly the machine's
	// (waking idle cores, stolen time), and this says how much of the hook's
	// p99 any server served here gets.
	floorHalf := &scenario{name: "floor, MyApp request, at that rate", server: myappFloor, target: byName["floor, MyApp request"].target, fixedRate: true}
	half := &scenario{name: "metahooks MyApp sync at half its peak rate", server: hooks, target: myappTarget, floor: floorHalf.name, fixedRate: true}
	halfOpts := opts
	halfOpts.Rate = peak.RPS / 2
	halfOpts.Duration = 2 * cfg.duration
	for round := 0; round < cfg.rounds || (round < 3*cfg.rounds && trustedRounds(half.rounds) < cfg.rounds); round++ {
		for _, s := range inRoundOrder([]*scenario{half, floorHalf}, round) {
			m, err := measure(s, halfOpts)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			s.rounds = append(s.rounds, m)
		}
	}
	scenarios = append(scenarios, half, floorHalf)
	byName[half.name], byName[floorHalf.name] = half, floorHalf
	fmt.Fprintf(out, "load average after: %s\n\n", loadAverage())

	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\treq/s\tp50\tp99\tCPU/req\tpeak RSS\tstolen\tvs floor\tvs floor, CPU\tvs python\t")
	for _, s := range scenarios {
		m := s.shown()
		rss, _ := s.server.PeakRSS()
		vsFloor, vsFloorCPU, vsPeer := "", "", ""
		if f := byName[s.floor]; f != nil {
			if !s.fixedRate {
				vsFloor = fmt.Sprintf("%.2f", perRound(s, f, rpsRatio).median)
			}
			vsFloorCPU = fmt.Sprintf("%.2f", perRound(s, f, cpuRatio).median)
		}
		if peer != nil && s == myapp {
			vsPeer = fmt.Sprintf("%.1fx", perRound(s, peer, rpsRatio).median)
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%s\t%s\t%d µs\t%.1f MiB\t%.1f%%\t%s\t%s\t%s\t\n", s.name, m.RPS, ms(m.P50), ms(m.P99),
			m.cpuPerRequest.Microseconds(), float64(rss)/(1<<20), 100*m.steal, vsFloor, vsFloorCPU, vsPeer)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "(each row is its median round of those with at most 5% stolen (of all, when none): by requests/s, or by p99 for a")
	fmt.Fprintln(out, " fixed rate. stolen: the machine's CPU time the hypervisor gave to others during that round. vs floor: requests/s")
	fmt.Fprintln(out, " over the floor's in the same round, median of the rounds; vs floor, CPU: the floor's server CPU time per request")
	fmt.Fprintln(out, " over this one's, which other work on the machine skews less. The targets are stated in requests/s.)")

	fmt.Fprintln(out, "\ntargets (issue 9):")
	rss, _ := hooks.PeakRSS()
	ratio := func(a, b string) spread { return perRound(byName[a], byName[b], rpsRatio) }
	check(out, "MyApp sync >= 0.30 of the floor", ratio("metahooks MyApp sync", "floor, MyApp request"), 0.30, "%.3f")
	if peer != nil {
		check(out, "MyApp sync >= 10x the Python peer hook", ratio("metahooks MyApp sync", peer.name), 10, "%.1fx")
	}
	p99 := func(s *scenario) spread {
		return over(s.rounds, func(m measured) float64 { return float64(m.P99) / float64(time.Millisecond) })
	}
	hookTail, floorTail := p99(half), p99(floorHalf)
	fmt.Fprintf(out, "  %-44s %8s  %-7s  rounds %s ms; the floor at that rate: %.2f ms, rounds %s ms%s\n", "MyApp p99 <= 5 ms at half the peak rate",
		fmt.Sprintf("%.2f ms", hookTail.median), judge(hookTail.median <= 5, hookTail.stolen), hookTail.rangeOf("%.2f"), floorTail.median, floorTail.rangeOf("%.2f"), stolenNote(hookTail.stolen))
	fmt.Fprintf(out, "  %-44s %8s  %s\n", "metahooks peak RSS <= 64 MiB", fmt.Sprintf("%.1f MiB", float64(rss)/(1<<20)), verdict(rss <= 64<<20))
	check(out, "Database sync >= 0.20 of the floor", ratio("metahooks Database sync", "floor, Database request"), 0.20, "%.3f")
	check(out, "ETag hit (412) >= 0.70 of the floor", ratio("metahooks ETag hit (412)", "floor, MyApp request"), 0.70, "%.3f")
	all := allRounds(scenarios)
	steals := make([]float64, len(all))
	for i, m := range all {
		steals[i] = 100 * m.steal
	}
	slices.Sort(steals)
	fmt.Fprintf(out, "\nCPU time stolen by the hypervisor per run: median %.1f%%, range %.1f-%.1f%%; %d of %d runs trusted (at most 5%%)\n",
		steals[(len(steals)-1)/2], steals[0], steals[len(steals)-1], trustedRounds(all), len(all))
	return nil
}

// shown is the round a scenario's row shows: of its trusted rounds (all of
// them when none is), the median by requests/s, or by p99 when it ran at a
// fixed rate.
func (s *scenario) shown() measured {
	key := func(m measured) float64 { return m.RPS }
	if s.fixedRate {
		key = func(m measured) float64 { return float64(m.P99) }
	}
	return s.rounds[over(s.rounds, key).at]
}

// trusted: the hypervisor stole at most trustedSteal during the run.
func (m measured) trusted() bool { return m.steal <= trustedSteal }

func trustedRounds(rounds []measured) int {
	n := 0
	for _, m := range rounds {
		if m.trusted() {
			n++
		}
	}
	return n
}

// enoughTrusted reports whether every pair has at least want rounds in
// which both of its runs are trusted.
func enoughTrusted(pairs [][2]*scenario, want int) bool {
	for _, p := range pairs {
		n := 0
		for i := range min(len(p[0].rounds), len(p[1].rounds)) {
			if p[0].rounds[i].trusted() && p[1].rounds[i].trusted() {
				n++
			}
		}
		if n < want {
			return false
		}
	}
	return true
}

func rpsRatio(a, b measured) float64 { return a.RPS / b.RPS }

// cpuRatio is b's CPU time per request over a's: how many of a's requests
// cost what one of b's does.
func cpuRatio(a, b measured) float64 { return float64(b.cpuPerRequest) / float64(a.cpuPerRequest) }

// spread is the median of some figures and their range, the share of CPU
// time stolen in the run (or the worse of the two runs) the median figure
// comes from, and how many figures were used of how many: the trusted ones
// when there are any, else all.
type spread struct {
	median, min, max, stolen float64
	used, of                 int
	allMin, allMax           float64 // the range of all of them
	at                       int     // the index of the median among the figures given
}

// figure is one round's figure and the CPU time stolen while it was taken.
type figure struct {
	value, stolen float64
	at            int // its index among the figures given to spreadOf
}

func (s spread) rangeOf(format string) string {
	r := fmt.Sprintf(format+"-"+format, s.min, s.max)
	if s.used < s.of {
		r += fmt.Sprintf(" (%d trusted of %d; all: "+format+"-"+format+")", s.used, s.of, s.allMin, s.allMax)
	}
	return r
}

// perRound is f of a's and b's runs in each round they both have, two runs
// seconds apart, so that the machine's drift from one minute to the next
// moves both alike.
func perRound(a, b *scenario, f func(a, b measured) float64) spread {
	n := min(len(a.rounds), len(b.rounds))
	figures := make([]figure, n)
	for i := range n {
		figures[i] = figure{f(a.rounds[i], b.rounds[i]), max(a.rounds[i].steal, b.rounds[i].steal), i}
	}
	return spreadOf(figures)
}

// over is f of each round.
func over(rounds []measured, f func(measured) float64) spread {
	figures := make([]figure, len(rounds))
	for i, m := range rounds {
		figures[i] = figure{f(m), m.steal, i}
	}
	return spreadOf(figures)
}

// inRoundOrder is the order of the scenarios in round: as listed in even
// rounds, reversed in odd ones.
func inRoundOrder(scenarios []*scenario, round int) []*scenario {
	if round%2 == 0 {
		return scenarios
	}
	reversed := slices.Clone(scenarios)
	slices.Reverse(reversed)
	return reversed
}

// spreadOf: of the trusted figures (at most trustedSteal stolen; all of
// them when none is), the lower middle one as the median, and its index.
// Figures that are not finite (a round without requests or without a CPU
// tick) are left out rather than sorted first.
func spreadOf(figures []figure) spread {
	finite := make([]figure, 0, len(figures))
	for _, f := range figures {
		if !math.IsNaN(f.value) && !math.IsInf(f.value, 0) {
			finite = append(finite, f)
		}
	}
	if len(finite) == 0 {
		return spread{}
	}
	sorted := slices.DeleteFunc(slices.Clone(finite), func(f figure) bool { return f.stolen > trustedSteal })
	if len(sorted) == 0 {
		sorted = finite
	}
	slices.SortStableFunc(sorted, byValue)
	mid := sorted[(len(sorted)-1)/2]
	lo, hi := slices.MinFunc(finite, byValue), slices.MaxFunc(finite, byValue)
	return spread{median: mid.value, min: sorted[0].value, max: sorted[len(sorted)-1].value, stolen: mid.stolen,
		used: len(sorted), of: len(finite), allMin: lo.value, allMax: hi.value, at: mid.at}
}

func byValue(a, b figure) int {
	return cmp.Compare(a.value, b.value)
}

func allRounds(scenarios []*scenario) []measured {
	var all []measured
	for _, s := range scenarios {
		all = append(all, s.rounds...)
	}
	return all
}

// with is header plus one more.
func with(header map[string]string, name, value string) map[string]string {
	out := map[string]string{name: value}
	for k, v := range header {
		out[k] = v
	}
	return out
}

func check(out io.Writer, what string, got spread, want float64, format string) {
	fmt.Fprintf(out, "  %-44s %8s  %-7s  rounds %s%s\n", what, fmt.Sprintf(format, got.median), judge(got.median >= want, got.stolen), got.rangeOf(format), stolenNote(got.stolen))
}

// trustedSteal is the most CPU time the hypervisor may steal during a run
// that a figure or a verdict rests on. Above it a run says more about the host than about
// the server: at 2,500 req/s the MyApp p99 was 3.95 ms with 1.4% stolen,
// 5.60 ms with 4.3%, and 10-20 ms with 10-19%; a floor round with 36.5%
// stolen answered half its usual requests/s and put the ETag hit at 1.23 of
// it (BENCHMARKS.md, "Issue 9, sixth pass").
const trustedSteal = 0.05

// judge is the verdict on ok, or UNSURE when the run it rests on had more
// than trustedSteal stolen.
func judge(ok bool, stolen float64) string {
	if stolen > trustedSteal {
		return "UNSURE"
	}
	return verdict(ok)
}

func stolenNote(stolen float64) string {
	if stolen <= trustedSteal {
		return ""
	}
	return fmt.Sprintf("; %.1f%% stolen in the median round, none trusted: no verdict", 100*stolen)
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT MET"
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(raw))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
