package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// Closing a listening socket does not refuse the connections the kernel
// already holds for it: on Linux, close(2) resets every connection whose
// handshake completed and that waits in the accept queue (the listen
// backlog), and the ACK that completes a half-open (SYN_RECV) handshake
// afterwards is answered with a reset too. Their clients have connected and
// may have sent their request; they see "connection reset", never
// "connection refused". Under a steady stream of new connections a close
// always catches a few.
//
// drainBacklog therefore stops new handshakes first (the kernel drops new
// SYNs, so their clients retransmit and meet the closed port, which refuses
// them), lets the handshakes already under way complete, and waits until
// the server has accepted every connection the kernel held. Only then is the
// listener closed. The accepted connections are served as usual (during the
// drain every answer carries Connection: close).

// backlogPoll is how often drainBacklog looks at what the kernel still
// holds.
const backlogPoll = time.Millisecond

// drainBacklog stops new handshakes on l and waits, until ctx is done, for
// the server's accept loop to take every connection the kernel holds for
// it. l must still be served. Where handshakes cannot be stopped (not Linux,
// or l is no socket), it returns an error wrapping errors.ErrUnsupported at
// once, and closing l may reset connections as before.
func drainBacklog(ctx context.Context, l net.Listener) error {
	sc, ok := l.(syscall.Conn)
	if !ok {
		return fmt.Errorf("listener %T has no socket: %w", l, errors.ErrUnsupported)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return fmt.Errorf("listener has no socket: %w", err)
	}
	pending, err := stopHandshakes(raw, l.Addr())
	if err != nil {
		return fmt.Errorf("cannot stop new handshakes: %w", err)
	}
	tick := time.NewTicker(backlogPoll)
	defer tick.Stop()
	for {
		n, err := pending()
		if err != nil {
			return fmt.Errorf("cannot tell which connections the kernel holds: %w", err)
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d connections still in the listen backlog: %w", n, ctx.Err())
		case <-tick.C:
		}
	}
}
