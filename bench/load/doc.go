// Package load is the shared tooling of the load benchmarks: it starts a real
// server binary on a loopback port, drives it over 127.0.0.1 at a fixed
// concurrency (as fast as it answers, or at a fixed rate), and reads the
// server's peak resident memory from /proc.
//
// Contract:
//   - FreeAddr picks a 127.0.0.1 port the OS says is free; Start runs a
//     command that serves on it and returns once the port accepts
//     connections; Server.PeakRSS reads VmHWM of that process (Linux only);
//     Server.Stop ends that process, and only it.
//   - Probe sends the request once and returns its answer's size and ETag;
//     Send sends it a fixed number of times on one connection.
//   - Run sends the same request over Concurrency keep-alive connections of
//     its own small HTTP/1.1 client (so the load generator costs little CPU
//     next to the server on a small machine), discards a warm-up, and returns
//     requests/s and latency percentiles of the measured part. A response with
//     another status than Target.WantStatus counts as an error, never as a
//     request served.
//   - Every run is bounded by Options.Duration; nothing here retries forever.
//   - ReadMachineTicks reads the machine's CPU time from /proc/stat (Linux
//     only); StealSince between two readings is the share the hypervisor
//     stole, which on a shared virtual machine moves every figure.
//
// Figures are only comparable within one run on one machine: compare servers
// as ratios, measured back to back.
package load
