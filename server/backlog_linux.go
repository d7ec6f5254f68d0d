//go:build linux

package main

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// dropSYNs is the classic BPF socket filter that stops new handshakes on a
// listening TCP socket: it drops every segment with SYN set and keeps the
// rest. A socket filter of a TCP socket sees the segment from its TCP
// header on (byte 13 holds the flags). The kernel runs the listener's
// filter on a SYN before it answers it, and on the ACK that completes a
// half-open handshake (tcp_v4_rcv and tcp_v6_rcv, TCP_NEW_SYN_RECV), which
// it keeps, so the handshakes already under way complete into the accept
// queue.
var dropSYNs = []bpf.Instruction{
	bpf.LoadAbsolute{Off: 13, Size: 1},
	bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: 0x02, SkipFalse: 1},
	bpf.RetConstant{Val: 0},
	bpf.RetConstant{Val: 0xffffffff},
}

// stopHandshakes attaches dropSYNs to the listening socket and returns how
// to count the connections the kernel still holds for it that the server
// has not accepted: half-open ones (SYN_RECV) and completed ones in the
// accept queue.
func stopHandshakes(raw syscall.RawConn, addr net.Addr) (pending func() (int, error), err error) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return nil, fmt.Errorf("listener on %s is not TCP: %w", addr, errors.ErrUnsupported)
	}
	if err := attachFilter(raw, dropSYNs); err != nil {
		return nil, err
	}
	return func() (int, error) {
		// Half-open first: a connection leaves SYN_RECV only after it
		// joined the accept queue, and no new one can start, so once
		// both counts were 0 in this order nothing is left.
		halfOpen, err := halfOpenConnections(tcp.Port)
		if err != nil {
			return 0, err
		}
		queued, err := acceptQueue(raw)
		return halfOpen + queued, err
	}, nil
}

func attachFilter(raw syscall.RawConn, program []bpf.Instruction) error {
	assembled, err := bpf.Assemble(program)
	if err != nil {
		return err
	}
	filter := make([]unix.SockFilter, len(assembled))
	for i, ins := range assembled {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	var setErr error
	if err := raw.Control(func(fd uintptr) {
		setErr = unix.SetsockoptSockFprog(int(fd), unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &prog)
	}); err != nil {
		return err
	}
	if setErr != nil {
		return fmt.Errorf("SO_ATTACH_FILTER: %w", setErr)
	}
	return nil
}

// acceptQueue is the number of completed connections waiting for accept(2):
// for a listening socket, TCP_INFO's tcpi_unacked.
func acceptQueue(raw syscall.RawConn) (int, error) {
	var info *unix.TCPInfo
	var infoErr error
	if err := raw.Control(func(fd uintptr) {
		info, infoErr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
	}); err != nil {
		return 0, err
	}
	if infoErr != nil {
		return 0, fmt.Errorf("TCP_INFO: %w", infoErr)
	}
	return int(info.Unacked), nil
}

// tcpTables list the network namespace's TCP sockets, request sockets of
// half-open handshakes included (as state 03, SYN_RECV).
var tcpTables = []string{"/proc/net/tcp", "/proc/net/tcp6"}

// halfOpenConnections counts the sockets in SYN_RECV on local port port, on
// any local address and in both tables: a request socket has its listener's
// family, so an IPv6 wildcard listener (--addr :8080) lists its IPv4
// handshakes too in /proc/net/tcp6, and an IPv4 one in /proc/net/tcp.
func halfOpenConnections(port int) (int, error) {
	n := 0
	for _, table := range tcpTables {
		f, err := os.Open(table)
		if errors.Is(err, fs.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			return 0, err
		}
		count, err := countSynRecv(bufio.NewScanner(f), port)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", table, err)
		}
		n += count
	}
	return n, nil
}

// tcpSynRecv is TCP_SYN_RECV in the st column of /proc/net/tcp.
const tcpSynRecv = "03"

// countSynRecv counts the rows of a /proc/net/tcp table in SYN_RECV whose
// local_address ("ADDR:PORT", the port in hex) has port.
func countSynRecv(rows *bufio.Scanner, port int) (int, error) {
	n := 0
	rows.Scan() // the header
	for rows.Scan() {
		fields := strings.Fields(rows.Text())
		if len(fields) < 4 || fields[3] != tcpSynRecv {
			continue
		}
		_, hexPort, ok := strings.Cut(fields[1], ":")
		if !ok {
			return 0, fmt.Errorf("local address %q has no port", fields[1])
		}
		p, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil {
			return 0, fmt.Errorf("local address %q: %w", fields[1], err)
		}
		if int(p) == port {
			n++
		}
	}
	return n, rows.Err()
}
