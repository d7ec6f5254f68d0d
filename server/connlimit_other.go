//go:build !linux

package main

import "net"

// unreadBytes is Linux only (FIONREAD); elsewhere only what the server has
// read tells that a connection holds a request (connLimitListener.holdsBytes).
func unreadBytes(net.Conn) bool { return false }
