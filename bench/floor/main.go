// Command floor is the HTTP floor of the load benchmark: a net/http server
// that reads each request body and answers a canned JSON body of a given
// size, and does nothing else. No hook served by net/http on the same
// machine can be faster, so hooks are measured as a fraction of it.
//
//	floor -addr 127.0.0.1:PORT -answer-bytes 4837
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address (loopback)")
	size := flag.Int("answer-bytes", 4096, "size of the canned answer, in bytes")
	flag.Parse()
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
	fmt.Println("floor serving on", l.Addr())
	if err := http.Serve(l, handler(*size)); err != nil {
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	}
}

// handler reads the body and writes the canned answer: a JSON object padded
// to exactly size bytes (at least the 12 bytes of its frame).
func handler(size int) http.Handler {
	answer := cannedAnswer(size)
	length := strconv.Itoa(len(answer))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", length)
		_, _ = w.Write(answer)
	})
}

func cannedAnswer(size int) []byte {
	const frame = `{"pad":""}` + "\n"
	pad := max(size-len(frame), 0)
	return []byte(`{"pad":"` + string(bytes.Repeat([]byte("x"), pad)) + `"}` + "\n")
}
