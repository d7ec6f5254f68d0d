package composite

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"a short value is quoted whole", "0 2 * * *", `"0 2 * * *"`},
		{"a value of exactly MaxQuoted bytes is quoted whole", strings.Repeat("a", MaxQuoted), `"` + strings.Repeat("a", MaxQuoted) + `"`},
		{"one byte more is cut and its size said", strings.Repeat("a", MaxQuoted+1), `"` + strings.Repeat("a", MaxQuoted) + `"…(65 bytes)`},
		{"a rune across the cut is left out whole, never split", strings.Repeat("a", MaxQuoted-1) + "é" + "z", `"` + strings.Repeat("a", MaxQuoted-1) + `"…(66 bytes)`},
		{"control characters are escaped as %q does", "a\nb", `"a\nb"`},
		{"the empty value is quoted", "", `""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Quote(tc.in)); diff != "" {
				t.Errorf("Quote (-want +got):\n%s", diff)
			}
		})
	}
}

// TestQuoteOfAMegabyte: the quote of a 1 MB value is short, and costs a
// bounded number of allocations.
func TestQuoteOfAMegabyte(t *testing.T) {
	value := strings.Repeat("x", 1<<20)
	if got := Quote(value); len(got) > 2*MaxQuoted+32 {
		t.Errorf("Quote of 1 MiB has %d bytes", len(got))
	}
	if allocs := testing.AllocsPerRun(10, func() { _ = Quote(value) }); allocs > 4 {
		t.Errorf("Quote of 1 MiB allocates %v times, want at most 4", allocs)
	}
}

// TestErrorsAreBounded: should a message ever quote a value whole, the
// error still says at most maxField bytes of path and maxReason of reason.
func TestErrorsAreBounded(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		reason string
		err    error
		want   string
	}{
		{"a usual InvalidError is whole", &InvalidError{Field: "spec.image", Reason: "required"}, "spec.image: required"},
		{"a usual RequestError is whole", &RequestError{Field: "parent", Reason: "required"}, "parent: required"},
		{"a RequestError without a field is its reason", &RequestError{Reason: "malformed JSON at byte 3"}, "malformed JSON at byte 3"},
		{"a huge reason is cut", &InvalidError{Field: "spec.x", Reason: huge}, "spec.x: " + huge[:maxReason] + "…(1048576 bytes)"},
		{"a huge path is cut", &RequestError{Field: huge, Reason: "duplicate key"}, huge[:maxField] + "…(1048576 bytes): duplicate key"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.err.Error()); diff != "" {
				t.Errorf("Error (-want +got):\n%s", diff)
			}
		})
	}
}
