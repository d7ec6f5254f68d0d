package composite

import (
	"bytes"
	"strings"

	"metahooks/api"
)

// unboundedQuantity is the reason for a quantity refused before any parse.
const unboundedQuantity = "malformed quantity: want at most 64 characters, a number with an optional suffix (1Gi, 500M, 250m, 2) or an exponent of at most 2 digits (1e3)"

// quantityBounded reports whether text, a quantity's JSON value as
// Quantity.UnmarshalJSON gets it (a string with its quotes, a number or
// null), is within api.MaxQuantityLength and matches api.QuantityPattern.
// It runs before any resource.ParseQuantity, which an exponent like
// 1e-99999999 stalls for minutes; it allocates nothing.
func quantityBounded(text []byte) bool {
	if string(text) == "null" {
		return true
	}
	if n := len(text); n >= 2 && text[0] == '"' && text[n-1] == '"' {
		text = text[1 : n-1]
	}
	return quantityTextBounded(bytes.TrimSpace(text)) // UnmarshalJSON trims as well
}

// quantityTextBounded is quantityBounded of the unquoted, trimmed text.
func quantityTextBounded(s []byte) bool {
	if len(s) > api.MaxQuantityLength {
		return false
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start := i
	i = skipDigits(s, i)
	whole := i - start
	frac := 0
	if i < len(s) && s[i] == '.' {
		i++
		at := i
		i = skipDigits(s, i)
		frac = i - at
	}
	if whole == 0 && frac == 0 {
		return false
	}
	rest := s[i:]
	switch {
	case len(rest) == 0:
		return true
	case len(rest) == 2 && rest[1] == 'i':
		return strings.IndexByte("KMGTPE", rest[0]) >= 0
	case len(rest) == 1:
		return strings.IndexByte("numkMGTPE", rest[0]) >= 0
	case rest[0] == 'e' || rest[0] == 'E':
		j := 1
		if j < len(rest) && (rest[j] == '+' || rest[j] == '-') {
			j++
		}
		digits := skipDigits(rest, j) - j
		return j+digits == len(rest) && digits >= 1 && digits <= api.MaxQuantityExponentDigits
	}
	return false
}

func skipDigits(s []byte, i int) int {
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}
