package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strconv"
	"time"
)

// request renders the target as HTTP/1.1 bytes, once per run.
func (t Target) request() []byte {
	var b bytes.Buffer
	method := "GET"
	if t.Body != nil {
		method = "POST"
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: metahooks-load\r\n", method, t.Path, t.Addr)
	if t.Body != nil {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(t.Body))
	}
	keys := make([]string, 0, len(t.Header))
	for k := range t.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\r\n", k, t.Header[k])
	}
	b.WriteString("\r\n")
	b.Write(t.Body)
	return b.Bytes()
}

// client is one keep-alive connection that sends a fixed request and reads
// answers with Content-Length or chunked bodies. It is much cheaper per
// request than net/http's client, which matters when the load generator
// shares two cores with the server it measures.
type client struct {
	addr    string
	request []byte
	conn    net.Conn
	r       *bufio.Reader
	closeIt bool // the last answer said Connection: close
}

func dial(addr string, request []byte) (*client, error) {
	c := &client{addr: addr, request: request}
	if err := c.redial(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *client) redial() error {
	c.close()
	conn, err := net.DialTimeout("tcp", c.addr, 5*time.Second)
	if err != nil {
		return fmt.Errorf("cannot connect to %s: %w", c.addr, err)
	}
	c.conn, c.closeIt = conn, false
	if c.r == nil {
		c.r = bufio.NewReaderSize(conn, 64<<10)
	} else {
		c.r.Reset(conn)
	}
	return nil
}

func (c *client) close() {
	if c.conn != nil {
		_ = c.conn.Close()
		c.conn = nil
	}
}

// do sends the request and reads the whole answer: its status and how many
// bytes it had.
func (c *client) do() (int, int64, error) {
	if c.closeIt || c.conn == nil {
		if err := c.redial(); err != nil {
			return 0, 0, err
		}
	}
	_ = c.conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.conn.Write(c.request); err != nil {
		return 0, 0, err
	}
	return readResponse(c.r, &c.closeIt)
}

var (
	errMalformed = errors.New("malformed HTTP response")
	crlf         = []byte("\r\n")
)

// readResponse reads one HTTP/1.1 response from r, discarding its body.
func readResponse(r *bufio.Reader, closeAfter *bool) (int, int64, error) {
	line, err := r.ReadSlice('\n')
	n := int64(len(line))
	if err != nil {
		return 0, n, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, n, errMalformed
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, n, errMalformed
	}
	length, chunked := int64(-1), false
	for {
		line, err := r.ReadSlice('\n')
		n += int64(len(line))
		if err != nil {
			return status, n, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return status, n, errMalformed
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return status, n, errMalformed
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			*closeAfter = bytes.EqualFold(value, []byte("close"))
		}
	}
	switch {
	case status == 204 || status == 304 || status < 200:
		return status, n, nil
	case chunked:
		body, err := discardChunked(r)
		return status, n + body, err
	case length >= 0:
		body, err := r.Discard(int(length))
		return status, n + int64(body), err
	}
	// No length: the body runs to the end of the connection.
	body, err := io.Copy(io.Discard, r)
	*closeAfter = true
	return status, n + body, err
}

func discardChunked(r *bufio.Reader) (int64, error) {
	var n int64
	for {
		line, err := r.ReadSlice('\n')
		n += int64(len(line))
		if err != nil {
			return n, err
		}
		sizeText, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		size, err := strconv.ParseInt(string(bytes.TrimSpace(sizeText)), 16, 64)
		if err != nil || size < 0 {
			return n, errMalformed
		}
		if size == 0 {
			// Trailers, then the empty line.
			for {
				line, err := r.ReadSlice('\n')
				n += int64(len(line))
				if err != nil {
					return n, err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return n, nil
				}
			}
		}
		d, err := r.Discard(int(size))
		n += int64(d)
		if err != nil {
			return n, err
		}
		end, err := r.ReadSlice('\n')
		n += int64(len(end))
		if err != nil {
			return n, err
		}
		if !bytes.Equal(end, crlf) {
			return n, errMalformed
		}
	}
}
