// Package api holds what the API versions below it share: the bounds of a
// quantity, which the CRDs (deploy/crds, through hack/generate.sh) and the
// hooks' decoder (hooks/composite) both enforce.
package api

// A quantity with an unbounded decimal exponent ("1e-99999999") makes
// resource.ParseQuantity and Quantity.Cmp build numbers of 10^99,999,999:
// minutes of CPU and hundreds of MB for a 2 KB object. Two exponent digits
// reach 1e±99, far past anything Kubernetes writes (nano precision to an
// int64 is 9.2e18), and 64 bytes hold any exact such value.
const (
	// MaxQuantityLength is the longest quantity text, in bytes.
	MaxQuantityLength = 64
	// MaxQuantityExponentDigits is the most digits of a decimal exponent (1e99).
	MaxQuantityExponentDigits = 2
	// QuantityPattern is resource.Quantity's grammar with an integer
	// exponent of at most MaxQuantityExponentDigits digits; hack/generate.sh
	// (hack/crdquantity) puts it in the CRDs in place of controller-gen's
	// unbounded one. It has no backslash ([.] for a dot), so the CEL rules
	// that guard quantity() with string(x).matches('...') quote it as it is.
	QuantityPattern = `^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$`
)
