package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// Probe sends the target's request once, on a connection of its own, and
// returns the size of its 200 answer's body and the answer's ETag; an
// answer without one fails.
func Probe(t Target) (int, string, error) {
	c, err := net.DialTimeout("tcp", t.Addr, 5*time.Second)
	if err != nil {
		return 0, "", err
	}
	defer c.Close()
	// One write: a server that answers before reading the body and then
	// closes would otherwise reset the connection over the unread part,
	// and the reset can discard the answer before it is read.
	var req bytes.Buffer
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n", t.Path, t.Addr, len(t.Body))
	for k, v := range t.Header {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n")
	req.Write(t.Body)
	if _, err := c.Write(req.Bytes()); err != nil {
		return 0, "", err
	}
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	raw, err := io.ReadAll(c)
	if err != nil {
		return 0, "", err
	}
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok || !bytes.HasPrefix(head, []byte("HTTP/1.1 200 ")) {
		return 0, "", fmt.Errorf("want 200, got %.200q", raw)
	}
	var etag string
	chunked := false
	for _, line := range strings.Split(string(head), "\r\n") {
		name, value, _ := strings.Cut(line, ":")
		switch strings.ToLower(name) {
		case "etag":
			etag = strings.TrimSpace(value)
		case "transfer-encoding":
			chunked = strings.TrimSpace(value) == "chunked"
		}
	}
	if chunked {
		if body, err = dechunk(body); err != nil {
			return 0, "", err
		}
	}
	if etag == "" {
		return 0, "", errors.New("answer has no ETag")
	}
	return len(body), etag, nil
}

func dechunk(b []byte) ([]byte, error) {
	var out []byte
	for {
		sizeLine, rest, ok := bytes.Cut(b, []byte("\r\n"))
		if !ok {
			return nil, errors.New("malformed chunked body")
		}
		var size int
		if _, err := fmt.Sscanf(string(sizeLine), "%x", &size); err != nil {
			return nil, errors.New("malformed chunk size")
		}
		if size == 0 {
			return out, nil
		}
		if len(rest) < size+2 {
			return nil, errors.New("truncated chunk")
		}
		out = append(out, rest[:size]...)
		b = rest[size+2:]
	}
}
