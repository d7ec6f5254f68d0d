package composite

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// RequestError reports a request body that is not a Metacontroller hook request:
// malformed JSON or a field of the wrong shape. The HTTP layer answers 400.
type RequestError struct {
	Field  string // JSON path of the offending field, e.g. "children"; may be empty
	Reason string
}

func (e *RequestError) Error() string {
	if e.Field == "" {
		return bounded(e.Reason, maxReason)
	}
	return bounded(e.Field, maxField) + ": " + bounded(e.Reason, maxReason)
}

// InvalidError reports a parent whose spec breaks its schema: a wrong type, an
// out-of-range value, a malformed cron line. The HTTP layer answers 422 and
// Metacontroller shows the message as a SyncError event on the parent.
type InvalidError struct {
	Field  string // JSON path inside the parent, e.g. "spec.replicaCount"
	Reason string
}

func (e *InvalidError) Error() string {
	return bounded(e.Field, maxField) + ": " + bounded(e.Reason, maxReason)
}

// The most bytes of a field path and of a reason an error message holds.
// Every value an error quotes is quoted with Quote, so no message comes
// near them; they are the backstop that keeps an error body and a log line
// short should a message ever quote a value whole.
const (
	maxField  = 512
	maxReason = 1024
)

// bounded is s, or its first max bytes (cut at a rune boundary) and
// "…(N bytes)".
func bounded(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// Invalid returns an *InvalidError for field with a formatted reason.
func Invalid(field, format string, args ...any) error {
	return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// IsInvalid reports whether err, or an error it wraps, is an *InvalidError.
func IsInvalid(err error) bool {
	var invalid *InvalidError
	return errors.As(err, &invalid)
}

// MaxQuoted is the most bytes of a value that Quote quotes: enough to
// recognise a value, never enough to make an error body or a log line large.
const MaxQuoted = 64

// Quote is s as %q quotes it, or, when s is longer than MaxQuoted bytes, its
// first MaxQuoted bytes (cut at a rune boundary) quoted and followed by
// "…(N bytes)". Every error that quotes a value from a request uses it, so
// a 1 MB value costs a 1 MB request, not a 3 MB error body and log line.
func Quote(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	cut := MaxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// ChildPath names an observed or related child in errors:
// children["StatefulSet.apps/v1"]["demo"], each key quoted with Quote, so
// that an absurd key (the hooks read children only under the names they
// derive, so one is never read) is named by its prefix alone.
func ChildPath(section, typeKey, key string) string {
	return section + "[" + Quote(typeKey) + "][" + Quote(key) + "]"
}
