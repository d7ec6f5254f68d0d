package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

func TestHandlerAnswersCannedBodyOfTheSize(t *testing.T) {
	for _, tc := range []struct {
		reason string
		size   int
		want   int
	}{
		{"the size asked for", 4837, 4837},
		{"smaller than the frame: the frame alone", 3, 11},
	} {
		rec := httptest.NewRecorder()
		handler(tc.size).ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/any", strings.NewReader(`{"parent":{}}`)))
		if rec.Code != 200 || rec.Body.Len() != tc.want {
			t.Errorf("%s: status %d, %d bytes; want 200, %d bytes", tc.reason, rec.Code, rec.Body.Len(), tc.want)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Errorf("%s: answer is not JSON: %q", tc.reason, rec.Body.String()[:20])
		}
		if got := rec.Header().Get("Content-Length"); got != strconv.Itoa(tc.want) {
			t.Errorf("%s: Content-Length %q, want %d", tc.reason, got, tc.want)
		}
	}
}
