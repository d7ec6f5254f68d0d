package main

import "testing"

func TestDefaultMaxInFlight(t *testing.T) {
	const mib = 1 << 20
	cases := map[string]struct {
		reason  string
		limit   int64
		maxBody int64
		want    int
	}{
		"Deployment":   {reason: "128 MiB, 8 MiB bodies: (128-32)/(4*8)", limit: 128 * mib, maxBody: 8 * mib, want: 3},
		"SmallBodies":  {reason: "128 MiB, 1 MiB bodies", limit: 128 * mib, maxBody: 1 * mib, want: 24},
		"NoLimit":      {reason: "no limit known: sized for 256 MiB", limit: 0, maxBody: 8 * mib, want: 7},
		"TooTight":     {reason: "never below one", limit: 40 * mib, maxBody: 8 * mib, want: 1},
		"UnderReserve": {reason: "a limit below the reserve still serves one", limit: 16 * mib, maxBody: 8 * mib, want: 1},
	}
	for name, tc := range cases {
		if got := defaultMaxInFlight(tc.limit, tc.maxBody); got != tc.want {
			t.Errorf("%s (%s): defaultMaxInFlight = %d, want %d", name, tc.reason, got, tc.want)
		}
	}
}
