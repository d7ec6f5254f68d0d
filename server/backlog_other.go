//go:build !linux

package main

import (
	"errors"
	"net"
	"syscall"
)

// stopHandshakes is Linux only; elsewhere the listener closes with what
// its backlog holds (see drainBacklog).
func stopHandshakes(syscall.RawConn, net.Addr) (pending func() (int, error), err error) {
	return nil, errors.ErrUnsupported
}
