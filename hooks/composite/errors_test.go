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
