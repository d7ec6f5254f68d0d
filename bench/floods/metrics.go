package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The metrics-headers flood of issue 30: headerClients clients, each
// sending requests of about headerBytes of header (under net/http's
// default limit of 1 MiB, which the metrics listener had before its own
// 16 KiB).
const (
	headerClients = 150
	headerBytes   = 1_000_000
)

// bigHeaders has n clients send GET path with a header of size bytes (1,000
// byte lines, no credentials) and read the answer, for d: again on the same
// connection while the server keeps it open, on a new one once it closes.
// It tallies the answers (status, or error), how many of the requests got
// their whole header written before the server closed, and the connections.
func bigHeaders(addr, path string, n, size int, d time.Duration) *tally {
	var b bytes.Buffer
	b.WriteString("GET " + path + " HTTP/1.1\r\nHost: bench\r\n")
	line := "X-Flood: " + strings.Repeat("x", 1000-len("X-Flood: \r\n")) + "\r\n"
	for b.Len()+len(line)+2 <= size {
		b.WriteString(line)
	}
	b.WriteString("\r\n")
	request := b.Bytes()

	t := &tally{}
	var requests, whole, conns atomic.Int64
	end := time.Now().Add(d)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
				if err != nil {
					t.addErr(err)
					time.Sleep(100 * time.Millisecond) // no busy loop on a refused port
					continue
				}
				conns.Add(1)
				r := bufio.NewReader(conn)
				for time.Now().Before(end) {
					_ = conn.SetDeadline(time.Now().Add(15 * time.Second))
					requests.Add(1)
					wrote := make(chan error, 1)
					go func() {
						_, err := conn.Write(request)
						wrote <- err
					}()
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						t.addErr(err)
						conn.Close() // ends the write, if it still runs
						if <-wrote == nil {
							whole.Add(1)
						}
						break
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					t.add(fmt.Sprint(resp.StatusCode))
					if resp.Close {
						conn.Close()
					}
					if err := <-wrote; err != nil || resp.Close {
						if err == nil {
							whole.Add(1)
						}
						break
					}
					whole.Add(1)
				}
				conn.Close()
			}
		}()
	}
	wg.Wait()
	t.add(fmt.Sprintf("(%d of %d requests sent their whole %d B header; %d connections)", whole.Load(), requests.Load(), len(request), conns.Load()))
	return t
}
