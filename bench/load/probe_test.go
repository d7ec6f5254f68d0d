package load

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProbe(t *testing.T) {
	cases := []struct {
		reason, etag string
		status, size int
		wantErr      string // "": the size and ETag come back
	}{
		{"a short answer with its length", `"abc"`, 200, 10, ""},
		{"a long answer, sent chunked, read whole", `"def"`, 200, 5000, ""},
		{"no ETag", "", 200, 10, "no ETag"},
		{"another status", `"abc"`, 500, 10, "want 200"},
	}
	for _, tc := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // as a hook does: the body is read before the answer
			if tc.etag != "" {
				w.Header().Set("ETag", tc.etag)
			}
			w.WriteHeader(tc.status)
			_, _ = w.Write([]byte(strings.Repeat("z", tc.size)))
		}))
		size, etag, err := Probe(Target{Addr: strings.TrimPrefix(srv.URL, "http://"), Path: "/", Body: []byte(`{}`)})
		srv.Close()
		switch {
		case tc.wantErr == "" && (err != nil || size != tc.size || etag != tc.etag):
			t.Errorf("%s: Probe = %d, %q, %v; want %d, %q", tc.reason, size, etag, err, tc.size, tc.etag)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: Probe error = %v, want one saying %q", tc.reason, err, tc.wantErr)
		}
	}
}
