package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sync/semaphore"

	"metahooks/hooks/composite"
)

// inFlightBudget bounds the memory hook requests may hold at once. It holds
// maxInFlight requests of the largest allowed body; a request takes a share
// of its declared Content-Length and slackShare, and a request without a
// Content-Length (chunked) takes a whole slot. Each byte of a share stands
// for decodeOverhead bytes of memory (membudget.go). Small
// requests (a share of at most smallShare, as every ordinary sync) also have
// a reserve of their own, so a flood of large bodies that spends the main
// budget cannot lock them out. Past the budget a request is answered 429 with
// Retry-After.
type inFlightBudget struct {
	sem          *semaphore.Weighted
	small        *semaphore.Weighted // the reserve of small requests
	maxBodyBytes int64
	maxInFlight  int
	gc           *gcGovernor // told of each request larger than smallShare; nil: none
}

// smallShare is the largest share that may use the small requests' reserve
// (a body of up to 256 KiB), and smallReserve the reserve: 13 requests of
// a tiny body, 5 of the largest small one (2 MiB of shares, 14 MiB with
// the decode overhead, inside memoryReserve).
const (
	smallShare   = 256<<10 + slackShare
	smallReserve = 2 << 20
)

// slackShare is the share of the decode budget's slack, which even a tiny
// body may spend (and which covers what a hook allocates beside its
// decode: a Database's answer).
const slackShare = (composite.DecodeBudgetSlack + decodeOverhead - 1) / decodeOverhead

// retryAfterSeconds is the Retry-After of a 429. Metacontroller requeues the
// parent after it, with no SyncError event and no backoff.
const retryAfterSeconds = 1

func newInFlightBudget(maxInFlight int, maxBodyBytes int64, gc *gcGovernor) *inFlightBudget {
	return &inFlightBudget{
		gc:           gc,
		sem:          semaphore.NewWeighted(int64(maxInFlight) * (maxBodyBytes + slackShare)),
		small:        semaphore.NewWeighted(smallReserve),
		maxBodyBytes: maxBodyBytes,
		maxInFlight:  maxInFlight,
	}
}

// share is what a request with this Content-Length (-1 when unknown) takes.
func (b *inFlightBudget) share(contentLength int64) int64 {
	if contentLength < 0 || contentLength > b.maxBodyBytes {
		return b.maxBodyBytes + slackShare
	}
	return contentLength + slackShare
}

// tryAcquire takes the request's share without waiting. It returns the
// function that gives it back, or false when the budget is spent. A nil
// budget never refuses.
func (b *inFlightBudget) tryAcquire(contentLength int64) (release func(), ok bool) {
	if b == nil {
		return func() {}, true
	}
	n := b.share(contentLength)
	if b.sem.TryAcquire(n) {
		if n <= smallShare {
			return func() { b.sem.Release(n) }, true
		}
		b.gc.enter()
		return func() { b.gc.leave(); b.sem.Release(n) }, true
	}
	if n <= smallShare && b.small.TryAcquire(n) {
		return func() { b.small.Release(n) }, true
	}
	return nil, false
}

// codeClientClosed is the metrics code of a request whose client went away
// (aborted, timed out on its side, reset) before it was answered. Such a
// request is no server error and never counted as one.
const codeClientClosed = "client_closed"

// codeServerTimeout is the metrics code of a request whose answer the
// server's own write deadline (http.Server.WriteTimeout: --request-timeout
// plus writeMargin) cut off: the hook was still computing when it passed,
// or the answer was still being written. No 504 goes on the wire (the
// client gets a cut connection, which Metacontroller reports as an error),
// but it is a server error, the one a proxy in front would log as 504, and
// a 5xx code keeps it in the alerts on code=~"5..".
const codeServerTimeout = "504"

// unansweredCode is the metrics code of a request whose answer could not
// be written (or was not, its context being done) because of err: the
// server's deadline (a timeout) or else the client going away.
func unansweredCode(err error) string {
	if isTimeout(err) {
		return codeServerTimeout
	}
	return codeClientClosed
}

// bodyError is a failure to read a request body, with the status it answers.
type bodyError struct {
	code    int // 0 when the client went away and nothing can be answered
	message string
	err     error
}

func (e *bodyError) Error() string { return e.message }
func (e *bodyError) Unwrap() error { return e.err }

// classifyBodyError maps a body read error to its answer: 413 past the limit,
// 408 when the body did not arrive before the read deadline, client_closed
// when the client hung up, 400 for anything else (a malformed chunked body).
func classifyBodyError(ctx context.Context, err error, limit int64) *bodyError {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return &bodyError{code: http.StatusRequestEntityTooLarge, message: tooLargeMessage(limit), err: err}
	case isTimeout(err):
		return &bodyError{code: http.StatusRequestTimeout, message: "request body did not arrive in time (--request-timeout)", err: err}
	case clientGone(ctx, err):
		return &bodyError{message: "client closed the connection before the body arrived", err: err}
	default:
		return &bodyError{code: http.StatusBadRequest, message: "cannot read request body: " + err.Error(), err: err}
	}
}

func tooLargeMessage(limit int64) string {
	return fmt.Sprintf("request body is larger than the limit of %d bytes (--max-body-bytes)", limit)
}

func isTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// clientGone reports whether err (or the request context) says the client
// went away: an early EOF, a reset, a broken pipe or a cancelled request.
func clientGone(ctx context.Context, err error) bool {
	return ctx.Err() != nil ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, context.Canceled)
}

// refuseBusy answers 429 with Retry-After, then reads the rest of the body
// into a small buffer and drops it (it holds no memory): a connection closed
// on a client still sending would reach it as a reset instead of the 429.
// The read deadline (--request-timeout) bounds the drain.
func refuseBusy(w http.ResponseWriter, r *http.Request, b *inFlightBudget) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds))
	writeError(w, http.StatusTooManyRequests,
		fmt.Sprintf("too many hook requests in flight (--max-in-flight %d); retry after %d s", b.maxInFlight, retryAfterSeconds))
	drainAfterRefusal(w, r, b.maxBodyBytes)
}

// After a refusal is flushed, what the client still sends is read and
// dropped (into a small buffer: no memory held), for at most drainTime and
// drainBytes: closing a connection with unread data resets it, and a client
// still sending its body may then lose the answer.
const (
	drainTime  = time.Second
	drainBytes = 64 << 20
)

func drainAfterRefusal(w http.ResponseWriter, r *http.Request, limit int64) {
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	_ = rc.SetReadDeadline(time.Now().Add(drainTime))
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, min(limit, drainBytes)))
}
