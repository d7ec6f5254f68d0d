package load

import (
	"bufio"
	"strings"
	"testing"
)

func TestReadResponse(t *testing.T) {
	for _, tc := range []struct {
		reason, raw string
		status      int
		rest        string // what must be left unread: the next response
		close       bool
		wantErr     bool
	}{
		{"Content-Length body", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloNEXT", 200, "NEXT", false, false},
		{"chunked body with trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n3;x=1\r\nabc\r\n0\r\nT: v\r\n\r\nNEXT", 200, "NEXT", false, false},
		{"412 without a body", "HTTP/1.1 412 Precondition Failed\r\nContent-Length: 0\r\n\r\nNEXT", 412, "NEXT", false, false},
		{"304 has no body", "HTTP/1.1 304 Not Modified\r\n\r\nNEXT", 304, "NEXT", false, false},
		{"no length: body to the end, then reconnect", "HTTP/1.0 200 OK\r\n\r\nall of it", 200, "", true, false},
		{"Connection: close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", 200, "", true, false},
		{"not HTTP", "SSH-2.0-x\r\n\r\n", 0, "", false, true},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 200, "", false, true},
		{"truncated body", "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort", 200, "", false, true},
	} {
		r := bufio.NewReader(strings.NewReader(tc.raw))
		var closeAfter bool
		status, n, err := readResponse(r, &closeAfter)
		if status != tc.status || (err != nil) != tc.wantErr || closeAfter != tc.close {
			t.Errorf("%s: readResponse = %d, close %v, err %v; want %d, close %v, error %v", tc.reason, status, closeAfter, err, tc.status, tc.close, tc.wantErr)
			continue
		}
		if tc.wantErr {
			continue
		}
		rest, _ := r.ReadString(0)
		if rest != tc.rest || n != int64(len(tc.raw)-len(tc.rest)) {
			t.Errorf("%s: read %d bytes, left %q; want %d bytes, left %q", tc.reason, n, rest, len(tc.raw)-len(tc.rest), tc.rest)
		}
	}
}

func TestRequestBytes(t *testing.T) {
	got := string(Target{Addr: "127.0.0.1:1", Path: "/hooks/myapp/sync", Body: []byte(`{}`), Header: map[string]string{"If-None-Match": `"x"`}}.request())
	want := "POST /hooks/myapp/sync HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUser-Agent: metahooks-load\r\nContent-Type: application/json\r\nContent-Length: 2\r\nIf-None-Match: \"x\"\r\n\r\n{}"
	if got != want {
		t.Errorf("request bytes:\n got %q\nwant %q", got, want)
	}
}
