package composite

import (
	"regexp"
	"strings"
	"testing"

	"metahooks/api"
)

// TestQuantityBounded: the hand-written check and api.QuantityPattern (with
// api.MaxQuantityLength) agree, value by value.
func TestQuantityBounded(t *testing.T) {
	pattern := regexp.MustCompile(api.QuantityPattern)
	cases := []struct {
		value, reason string
		want          bool
	}{
		{"100m", "milli suffix", true},
		{"1.5Gi", "binary suffix with a fraction", true},
		{"1e3", "an exponent", true},
		{"1E2", "an upper-case exponent", true},
		{"1E", "E alone is exa", true},
		{"0.5", "a fraction", true},
		{".5", "a fraction without its integer", true},
		{"1.", "a trailing dot, as ParseQuantity takes", true},
		{"+1", "a sign", true},
		{"-1e-99", "two exponent digits, the bound", true},
		{"1e-999", "three exponent digits", false},
		{"1e-99999999", "issue 30's stall", false},
		{strings.Repeat("1", 64), "64 bytes, the bound", true},
		{strings.Repeat("1", 65), "65 bytes", false},
		{"1e", "an exponent without digits", false},
		{"1e1.5", "a fractional exponent, which ParseQuantity refuses", false},
		{".", "no digits", false},
		{"1Ki", "Ki", true},
		{"1K", "K alone is no suffix", false},
	}
	for _, c := range cases {
		t.Run(c.value[:min(len(c.value), 16)], func(t *testing.T) {
			got := quantityTextBounded([]byte(c.value))
			if got != c.want {
				t.Errorf("%s: quantityTextBounded(%.20q) = %v, want %v", c.reason, c.value, got, c.want)
			}
			if regexpGot := len(c.value) <= api.MaxQuantityLength && pattern.MatchString(c.value); regexpGot != got {
				t.Errorf("%s: api.QuantityPattern says %v, the check %v", c.reason, regexpGot, got)
			}
		})
	}
}

// TestUnboundedQuantityRefused: issue 30's pathological quantity gets a 422
// naming the field on both decode paths (before: ~50 s of CPU, then 200).
func TestUnboundedQuantityRefused(t *testing.T) {
	parent := `{"apiVersion":"example.com/v1alpha1","kind":"MyApp","metadata":{"name":"a","namespace":"n"},"spec":{"image":"x","resources":{"limits":{"cpu":"1e-99999999"}}}}`
	answer, _ := checkPathsAgree(t, "MyApp", []byte(`{"parent":`+parent+`}`))
	if answer.Code != 422 || !strings.Contains(answer.Reads[0], `spec.resources.limits["cpu"]: `+unboundedQuantity) {
		t.Errorf("answer %+v, want 422 naming spec.resources.limits[\"cpu\"]", answer)
	}
}
