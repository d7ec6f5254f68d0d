package kube

import (
	"testing"

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
