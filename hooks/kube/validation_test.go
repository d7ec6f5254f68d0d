package kube

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestValidateQuantity(t *testing.T) {
	for _, tc := range []struct {
		raw    string
		want   string // the error, "" for none
		reason string
	}{
		{"5Gi", "", "an ordinary size"},
		{"0", "", "zero is not negative"},
		{"8Pi", "", "the largest quantity allowed"},
		{"9007199254740993", "out of range: at most 8Pi, got 9007199254740993", "one past 8Pi, a whole number"},
		{"1500m", "", "not a whole number: compared as a quantity"},
		{"9007199254740992", "", "8Pi written out, a whole number: the bound itself"},
		{"-500m", "must not be negative, got -500m", "negative and not a whole number"},
		{"-1", "must not be negative, got -1", "negative"},
		{"9Pi", "out of range: at most 8Pi, got 9Pi", "past the bound: quoted as written"},
		{"99999999999999999999999Ei", "out of range: at most 8Pi", "past int64: parsed clamped to 9223372036854775807, which the message must not quote as if written"},
	} {
		t.Run(tc.raw, func(t *testing.T) {
			err := ValidateQuantity(resource.MustParse(tc.raw))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.want {
				t.Errorf("ValidateQuantity(%s) = %q, want %q: %s", tc.raw, got, tc.want, tc.reason)
			}
		})
	}
}

func TestValidateLength(t *testing.T) {
	for _, tc := range []struct {
		reason string
		value  string
		max    int
		want   string // "" for no error
	}{
		{reason: "within the limit", value: "postgres:17", max: 16},
		{reason: "exactly at the limit", value: strings.Repeat("a", 16), max: 16},
		{reason: "one character more", value: strings.Repeat("a", 17), max: 16, want: `must be at most 16 characters, got 17: "aaaaaaaaaaaaaaaaa"`},
		{reason: "multi-byte characters count once, as the CRD's maxLength counts them", value: strings.Repeat("é", 16), max: 16},
		{reason: "17 of them are one too many", value: strings.Repeat("é", 17), max: 16, want: `must be at most 16 characters, got 17: "` + strings.Repeat("é", 17) + `"`},
		{reason: "past 4 bytes a character, refused by its size alone and quoted by a prefix", value: strings.Repeat("a", 1<<20), max: 16,
			want: `must be at most 16 characters, got 1048576 bytes: "` + strings.Repeat("a", 64) + `"…(1048576 bytes)`},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			got := ""
			if err := ValidateLength(tc.value, tc.max); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateLength (-want +got):\n%s", diff)
			}
		})
	}
}
