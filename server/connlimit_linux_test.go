//go:build linux

package main

import (
	"net"
	"testing"
	"time"
)

// TestUnreadBytes: FIONREAD sees the bytes a peer sent that the server has
// not read, and nothing once they are read.
func TestUnreadBytes(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	if unreadBytes(server) {
		t.Fatal("unread bytes before the client sent any")
	}
	if _, err := client.Write([]byte("GET")); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); !unreadBytes(server); time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("3 bytes sent and none unread after 5 s")
		}
	}
	buf := make([]byte, 3)
	if _, err := server.Read(buf); err != nil {
		t.Fatal(err)
	}
	if unreadBytes(server) {
		t.Error("unread bytes after the server read all 3")
	}
}
