//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/bpf"
)

// tcpHeader is a 20-byte TCP header with flags, then payload.
func tcpHeader(flags byte, payload string) []byte {
	h := make([]byte, 20, 20+len(payload))
	h[12] = 5 << 4 // data offset: 5 words
	h[13] = flags
	return append(h, payload...)
}

const (
	flagFIN = 0x01
	flagSYN = 0x02
	flagRST = 0x04
	flagPSH = 0x08
	flagACK = 0x10
)

func TestDropSYNs(t *testing.T) {
	vm, err := bpf.NewVM(dropSYNs)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		segment []byte
		keep    bool
		reason  string
	}{
		{"SYN", tcpHeader(flagSYN, ""), false, "a new handshake: dropped, the client retransmits and meets the closed port"},
		{"SYN with ECN bits", tcpHeader(flagSYN|0xc0, ""), false, "ECE and CWR do not make a SYN anything else"},
		{"ACK", tcpHeader(flagACK, ""), true, "completes a handshake already under way"},
		{"ACK with data", tcpHeader(flagACK|flagPSH, "POST / HTTP/1.1\r\n"), true, "completes a handshake and carries the request"},
		{"FIN", tcpHeader(flagFIN|flagACK, ""), true, "not a handshake"},
		{"RST", tcpHeader(flagRST, ""), true, "not a handshake"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kept, err := vm.Run(tc.segment)
			if err != nil {
				t.Fatal(err)
			}
			if got := kept > 0; got != tc.keep {
				t.Errorf("kept %d bytes; want kept=%t: %s", kept, tc.keep, tc.reason)
			}
		})
	}
}

func TestCountSynRecv(t *testing.T) {
	const table = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
   1: 0100007F:1F90 0100007F:D431 03 00000000:00000000 02:000000C8 00000000     0        0 0 1 0000000000000000
   2: 0100007F:1F90 0100007F:D432 03 00000000:00000000 02:000000C8 00000000     0        0 0 1 0000000000000000
   3: 0100007F:1F91 0100007F:D433 03 00000000:00000000 02:000000C8 00000000     0        0 0 1 0000000000000000
   4: 0100007F:1F90 0100007F:D434 01 00000000:00000000 00:00000000 00000000     0        0 7 1 0000000000000000 20 4 30 10 -1
   5: 00000000000000000000000001000000:1F90 00000000000000000000000001000000:D435 03 00000000:00000000 02:000000C8 00000000     0        0 0 1 0000000000000000
`
	for _, tc := range []struct {
		name  string
		table string
		port  int
		want  int
	}{
		{"port 8080", table, 8080, 3},                                      // rows 1, 2 and the IPv6 row 5; not the listener (0A) nor the established row 4
		{"port 8081", table, 8081, 1},                                      // row 3 only
		{"other port", table, 9090, 0},                                     // nothing on it
		{"header only", "  sl  local_address rem_address   st\n", 8080, 0}, // no sockets at all
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := countSynRecv(bufio.NewScanner(strings.NewReader(tc.table)), tc.port)
			if err != nil || got != tc.want {
				t.Errorf("countSynRecv = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
	if _, err := countSynRecv(bufio.NewScanner(strings.NewReader("header\n 0: 0100007F 0 03\n")), 8080); err == nil {
		t.Error("countSynRecv accepted a local address without a port")
	}
}

// backlogListenAddrs are the listen addresses the drain is tested on: a
// loopback one, and a wildcard as --addr :8080 gives (on Linux an IPv6
// socket that also takes IPv4, whose half-open handshakes are listed in
// /proc/net/tcp6).
var backlogListenAddrs = []string{"127.0.0.1:0", ":0"}

// listenForBacklog is a plain TCP listener on listenAddr (listenTCP), closed
// when the test ends, and the 127.0.0.1 address to dial it.
func listenForBacklog(t *testing.T, listenAddr string) (*net.TCPListener, string) {
	t.Helper()
	l, err := listenTCP(listenAddr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	port := l.Addr().(*net.TCPAddr).Port
	return l.(*net.TCPListener), net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// dialAndSend connects and sends a line.
func dialAndSend(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "ping\n"); err != nil {
		t.Fatal(err)
	}
	return c
}

// echoAccepted accepts until the listener closes and answers each
// connection's first line with "pong", sending the connections it accepted
// to accepted.
// awaitAccepted waits (a generous bound, not a speed) for n connections
// the accept loop hands on.
func awaitAccepted(t *testing.T, accepted <-chan net.Conn, n int) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for k := range n {
		select {
		case <-accepted:
		case <-timeout:
			t.Fatalf("%d of %d accepted connections handed on within 10 s", k, n)
		}
	}
}

func echoAccepted(l net.Listener, accepted chan<- net.Conn) {
	for {
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
		go func() {
			line, err := bufio.NewReader(c).ReadString('\n')
			if err == nil && line == "ping\n" {
				_, _ = io.WriteString(c, "pong\n")
			}
		}()
	}
}

// expectPong reads the answer on a client connection: "pong", not a reset.
func expectPong(t *testing.T, c net.Conn) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || line != "pong\n" {
		t.Errorf("client %s read %q, %v; want pong (a queued connection must be served, not reset)", c.LocalAddr(), line, err)
	}
}

// TestDrainBacklogServesQueuedConnections: connections in the accept queue
// when the drain begins are accepted and answered, none is reset by the
// close, and a connection attempted after the drain is refused once the
// listener has closed.
func TestDrainBacklogServesQueuedConnections(t *testing.T) {
	for _, listenAddr := range backlogListenAddrs {
		t.Run(listenAddr, func(t *testing.T) { testDrainBacklogServesQueued(t, listenAddr) })
	}
}

func testDrainBacklogServesQueued(t *testing.T, listenAddr string) {
	l, addr := listenForBacklog(t, listenAddr)
	var clients []net.Conn
	for range 5 {
		clients = append(clients, dialAndSend(t, addr))
	}

	// Nothing accepts yet: the drain must wait for the five.
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	err := drainBacklog(short, l)
	cancel()
	if err == nil || !strings.Contains(err.Error(), "5 connections still in the listen backlog") {
		t.Fatalf("drainBacklog with 5 queued and no accept loop = %v, want it to wait and report 5 still queued", err)
	}

	// A connection attempted now gets no handshake.
	late := make(chan error, 1)
	go func() {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			c.Close()
		}
		late <- err
	}()

	accepted := make(chan net.Conn, 16)
	go echoAccepted(l, accepted)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := drainBacklog(ctx, l); err != nil {
		t.Fatalf("drainBacklog with an accept loop: %v", err)
	}
	// The drain returns once the kernel's accept queue is empty; the
	// accept loop hands each connection on a moment after its accept.
	raw, err := l.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if queued, err := acceptQueue(raw); err != nil || queued != 0 {
		t.Errorf("accept queue = %d, %v at the end of the drain; want 0", queued, err)
	}
	awaitAccepted(t, accepted, 5)
	select {
	case err := <-late:
		t.Fatalf("a connection attempted after handshakes stopped ended before the close: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	l.Close()
	for _, c := range clients {
		expectPong(t, c)
	}
	if err := <-late; !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("a connection attempted after handshakes stopped: %v, want connection refused once the listener closed", err)
	}
}

// TestDrainBacklogWaitsForHalfOpenHandshakes: a handshake the kernel has
// answered but not completed when the drain begins (SYN_RECV) completes,
// and the drain waits until the server has accepted it.
func TestDrainBacklogWaitsForHalfOpenHandshakes(t *testing.T) {
	for _, listenAddr := range backlogListenAddrs {
		t.Run(listenAddr, func(t *testing.T) { testDrainBacklogWaitsForHalfOpen(t, listenAddr) })
	}
}

func testDrainBacklogWaitsForHalfOpen(t *testing.T, listenAddr string) {
	l, addr := listenForBacklog(t, listenAddr)
	raw, err := l.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	// Keep only SYNs: the kernel answers them, but the client's ACK (and
	// its data) are dropped, so the handshake stays half-open.
	keepSYNs := []bpf.Instruction{
		bpf.LoadAbsolute{Off: 13, Size: 1},
		bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: flagSYN, SkipTrue: 1},
		bpf.RetConstant{Val: 0},
		bpf.RetConstant{Val: 0xffffffff},
	}
	if err := attachFilter(raw, keepSYNs); err != nil {
		t.Fatal(err)
	}
	client := dialAndSend(t, addr)
	port := l.Addr().(*net.TCPAddr).Port
	deadline := time.Now().Add(2 * time.Second)
	for {
		n, err := halfOpenConnections(port)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d half-open connections on port %d, want the client's 1", n, port)
		}
		time.Sleep(time.Millisecond)
	}
	if queued, err := acceptQueue(raw); err != nil || queued != 0 {
		t.Fatalf("accept queue = %d, %v; want 0 while the handshake is half-open", queued, err)
	}

	accepted := make(chan net.Conn, 1)
	go echoAccepted(l, accepted)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := drainBacklog(ctx, l); err != nil {
		t.Fatalf("drainBacklog: %v", err)
	}
	if queued, err := acceptQueue(raw); err != nil || queued != 0 {
		t.Fatalf("drainBacklog returned after %v with the accept queue at %d (%v): the half-open connection not accepted", time.Since(start), queued, err)
	}
	if n, err := halfOpenConnections(port); err != nil || n != 0 {
		t.Fatalf("drainBacklog returned after %v with %d half-open connections (%v)", time.Since(start), n, err)
	}
	awaitAccepted(t, accepted, 1)
	l.Close()
	expectPong(t, client)
}
