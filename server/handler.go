package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/zeebo/blake3"
	"k8s.io/apimachinery/pkg/util/validation"

	"metahooks/hooks/composite"
)

// hookHandler serves one parent's sync, finalize or customize route: check
// the request, decode, call the pure hook, encode, map errors to status codes.
type hookHandler struct {
	parent       parentHook
	hook         string // "sync", "finalize" or hookCustomize
	maxBodyBytes int64
	inFlight     *inFlightBudget // nil: no limit
	build        string          // buildIdentity, mixed into the ETag so a new build never reuses old answers
	now          func() time.Time
	log          *slog.Logger // carries parent_kind and hook already
	metrics      *metrics
	remembered   *answeredBodies // the bodies of the latest ETags; nil: none kept

	// Built on the first request, not on every one: the route's metric
	// series and the ETag's fixed prefix.
	once   sync.Once
	series routeSeries
	prefix []byte
}

// routeSeries are the metric series of one route whose labels never change.
type routeSeries struct {
	duration, requestBytes, children prometheus.Observer
	etagHits, finalizations          prometheus.Counter
	// answered200, answered412 count the answers of the hot paths; other
	// codes are looked up per request.
	answered200, answered412 prometheus.Counter
}

func (h *hookHandler) init() {
	h.once.Do(func() {
		m, route, hook := h.metrics, h.parent.route, h.hook
		h.series = routeSeries{
			duration:      m.duration.WithLabelValues(route, hook),
			requestBytes:  m.requestBytes.WithLabelValues(route, hook),
			children:      m.children.WithLabelValues(route, hook),
			etagHits:      m.etagHits.WithLabelValues(route, hook),
			finalizations: m.finalizations.WithLabelValues(route),
			answered200:   m.requests.WithLabelValues(route, hook, "200"),
			answered412:   m.requests.WithLabelValues(route, hook, "412"),
		}
		h.prefix = fmt.Appendf(nil, "%s\x00%s\x00%s\x00", h.build, route, hook)
	})
}

func (h *hookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	h.init()
	rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
	defer func() {
		if p := recover(); p != nil {
			h.metrics.panics.Inc()
			h.log.Error("panic in hook", "panic", fmt.Sprint(p))
			if !rec.wrote {
				writeError(rec, http.StatusInternalServerError, fmt.Sprintf("internal error in %s %s hook", h.parent.kind, h.hook))
			}
		}
		h.flush(rec, r)
		h.answered(rec).Inc()
		h.series.duration.Observe(time.Since(start).Seconds())
	}()
	h.serve(rec, r)
}

func (h *hookHandler) serve(w http.ResponseWriter, r *http.Request) {
	if err := checkContentType(r.Header.Get("Content-Type")); err != nil {
		writeError(w, http.StatusUnsupportedMediaType, err.Error())
		return
	}
	if r.ContentLength > h.maxBodyBytes {
		// Refused from the header: the body is never held.
		writeError(w, http.StatusRequestEntityTooLarge, tooLargeMessage(h.maxBodyBytes))
		drainAfterRefusal(w, r, drainBytes)
		return
	}
	release, ok := h.inFlight.tryAcquire(r.ContentLength)
	if !ok {
		h.metrics.rejected.WithLabelValues(h.parent.route, h.hook).Inc()
		refuseBusy(w, r, h.inFlight)
		return
	}
	defer release()
	body, done, err := readBody(w, r, h.maxBodyBytes)
	defer done()
	if err != nil {
		bodyErr := classifyBodyError(r.Context(), err, h.maxBodyBytes)
		if bodyErr.code == 0 {
			h.unanswered(w, r, bodyErr)
			return
		}
		writeError(w, bodyErr.code, bodyErr.message)
		return
	}
	h.series.requestBytes.Observe(float64(len(body)))

	// Metacontroller reuses the body it cached for the ETag in
	// If-None-Match: an answer is given an ETag only when it holds for its
	// request at any later time (reusable), so on a match there is nothing
	// to compute. A body remembered with that ETag needs no hash.
	inputs := h.answerInputs()
	match := r.Header.Get("If-None-Match")
	if match != "" && h.remembered.matches(match, h.prefix, body, inputs) {
		h.notModified(w, match)
		return
	}
	etag := h.etag(body, inputs)
	if match != "" && match == etag {
		h.remembered.remember(etag, h.prefix, body, inputs)
		h.notModified(w, etag)
		return
	}

	var raw []byte
	var parent json.RawMessage
	reusable := true
	if h.hook == hookCustomize {
		raw, parent, err = h.customize(body)
	} else {
		raw, parent, reusable, err = h.sync(body)
		defer putAnswerBuffer(raw)
	}
	if err != nil {
		h.fail(w, r, parent, err)
		return
	}
	if err := r.Context().Err(); err != nil { // the client went away (net/http cancels it when the connection ends)
		h.unanswered(w, r, err)
		return
	}
	header := w.Header()
	header.Set("Content-Type", "application/json")
	header.Set("Content-Length", strconv.Itoa(len(raw))) // one write, not chunks
	if reusable {
		header.Set("ETag", etag)
		h.remembered.remember(etag, h.prefix, body, inputs)
	}
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(raw); err != nil {
		h.unanswered(w, r, err)
	}
}

// notModified answers 412 with etag: the request's body has it.
func (h *hookHandler) notModified(w http.ResponseWriter, etag string) {
	h.series.etagHits.Inc()
	header := w.Header()
	header.Set("ETag", etag)
	header.Set("Content-Length", "0") // what net/http sends anyway; it lets flush send the answer
	w.WriteHeader(http.StatusPreconditionFailed)
}

// answerInputs is what the answers depend on now besides the request and
// the build (parentHook.answerInputs); nil for a parent with nothing else.
func (h *hookHandler) answerInputs() []byte {
	if h.parent.answerInputs == nil {
		return nil
	}
	return h.parent.answerInputs()
}

// answered is the requests counter of the answer rec recorded.
func (h *hookHandler) answered(rec *statusRecorder) prometheus.Counter {
	switch {
	case rec.outcome != "":
	case rec.code == http.StatusOK:
		return h.series.answered200
	case rec.code == http.StatusPreconditionFailed:
		return h.series.answered412
	}
	return h.metrics.requests.WithLabelValues(h.parent.route, h.hook, rec.label())
}

// unanswered logs and counts a request whose answer did not get out
// because of err (unansweredCode): the server's own write deadline passed
// (codeServerTimeout, a server error), or the client went away before it
// was answered (codeClientClosed: not a server error, so never counted as
// a 5xx).
func (h *hookHandler) unanswered(w http.ResponseWriter, r *http.Request, err error) {
	code := unansweredCode(err)
	if rec, ok := w.(*statusRecorder); ok && rec.outcome == "" {
		rec.outcome = code
	}
	if code == codeServerTimeout {
		h.log.Warn("answer not written within the write deadline (--request-timeout + 1s)", "remote", r.RemoteAddr, "error", err.Error())
		return
	}
	h.log.Info("client closed the connection before the answer", "remote", r.RemoteAddr, "error", err.Error())
}

// flush sends an answer of known length (every answer with a body, and
// 412) before it is counted: net/http would send what is buffered only
// after the handler returned, and a write failing then is seen by no one,
// so an answer cut off by the write deadline would count as its status.
func (h *hookHandler) flush(rec *statusRecorder, r *http.Request) {
	if rec.outcome != "" || !rec.wrote || rec.Header().Get("Content-Length") == "" {
		return
	}
	if err := http.NewResponseController(rec.ResponseWriter).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		h.unanswered(rec, r, err)
	}
}

// sync decodes a sync or finalize request, calls the hook and encodes its
// answer. It also returns the raw parent (nil if the body did not decode), so
// log lines can name it, and whether Metacontroller may reuse the answer for
// the same body (see reusable).
func (h *hookHandler) sync(body []byte) ([]byte, json.RawMessage, bool, error) {
	req, err := composite.DecodeRequestPrefetching(body, h.parent.prefetch)
	if err != nil {
		return nil, nil, false, err
	}
	response, err := h.parent.sync(req, h.now())
	if err != nil {
		return nil, req.Parent, false, err
	}
	defer response.Release() // its JSON is copied into raw
	raw, err := response.AppendJSON(answerBuffer(responseSize(response)))
	if err != nil {
		return nil, req.Parent, false, fmt.Errorf("cannot encode response: %w", err)
	}
	h.series.children.Observe(float64(len(response.Children)))
	if response.Finalized {
		h.series.finalizations.Inc()
	}
	if h.log.Enabled(context.Background(), slog.LevelDebug) { // the arguments cost allocations even when not written
		h.log.Debug("hook answered", "parent", parentRef(req.Parent), "children", len(response.Children), "finalized", response.Finalized)
	}
	return raw, req.Parent, reusable(response), nil
}

// reusable reports whether an answer holds for its request at any later
// time, so it may carry an ETag. An answer with resyncAfterSeconds waits on
// the clock (a failover delay running out, a finalize polling): the same
// request later may need another answer, and a 412 would make Metacontroller
// replay this one, resync delay included, for as long as the request stays
// the same. Without an ETag Metacontroller keeps what it had cached, which
// was given for an earlier request, so the next call is computed.
func reusable(response *composite.Response) bool {
	return response.ResyncAfterSeconds <= 0
}

// responseSize is the size of the response's JSON but for a few bytes.
func responseSize(r *composite.Response) int {
	n := len(r.Status) + 96
	for _, c := range r.Children {
		n += len(c.JSON) + 1
	}
	return n
}

// answerBuffer is an empty buffer of at least size bytes for a sync answer,
// reused from answerBuffers when one is large enough: a Database answer is
// tens of KB, and allocating it anew for every request is a large share of
// what the collector has to reclaim. putAnswerBuffer gives it back once the
// answer is written.
func answerBuffer(size int) []byte {
	if b, ok := answerBuffers.Get().(*[]byte); ok && cap(*b) >= size {
		return (*b)[:0]
	}
	return make([]byte, 0, size)
}

// putAnswerBuffer keeps an answer's buffer for the next answer, unless it
// is one of the rare huge ones (a request near --max-body-bytes).
func putAnswerBuffer(b []byte) {
	if cap(b) > 0 && cap(b) <= pooledBodyBytes {
		b = b[:0]
		answerBuffers.Put(&b)
	}
}

var answerBuffers sync.Pool

// customize decodes a customize request, calls the parent's customize hook
// and encodes its answer.
func (h *hookHandler) customize(body []byte) ([]byte, json.RawMessage, error) {
	req, err := composite.DecodeCustomizeRequest(body)
	if err != nil {
		return nil, nil, err
	}
	response, err := h.parent.customize(req)
	if err != nil {
		return nil, req.Parent, err
	}
	raw, err := json.Marshal(response)
	if err != nil {
		return nil, req.Parent, fmt.Errorf("cannot encode response: %w", err)
	}
	if h.log.Enabled(context.Background(), slog.LevelDebug) {
		h.log.Debug("hook answered", "parent", parentRef(req.Parent), "relatedResources", len(response.RelatedResources))
	}
	return raw, req.Parent, nil
}

// readBody reads the whole body, at most limit bytes. A Content-Length within
// the limit sizes the buffer up front, so a large request is not copied over
// and over while it is read. Bodies up to pooledBodyBytes are read into a
// pooled buffer: done gives it back, so nothing may keep the body (or a
// sub-slice: the decoded request's parent and children are) past done.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) (body []byte, done func(), err error) {
	buf, done := new(bytes.Buffer), func() {}
	if r.ContentLength >= 0 && r.ContentLength <= min(limit, pooledBodyBytes) {
		buf = bodyBuffers.Get().(*bytes.Buffer)
		buf.Reset()
		done = func() {
			if buf.Cap() <= 2*pooledBodyBytes {
				bodyBuffers.Put(buf)
			}
		}
	}
	if r.ContentLength > 0 && r.ContentLength <= limit {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, err = buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	return buf.Bytes(), done, err
}

// pooledBodyBytes bounds the bodies read into pooled buffers: every
// realistic request, not the rare huge one.
const pooledBodyBytes = 256 << 10

var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// fail answers a non-200 with the error named. Messages never carry request
// bodies, so no Secret data reaches logs or events.
func (h *hookHandler) fail(w http.ResponseWriter, r *http.Request, parent json.RawMessage, err error) {
	code := statusCode(err)
	level := slog.LevelWarn
	if code >= 500 {
		level = slog.LevelError
	}
	h.log.Log(r.Context(), level, "hook failed", "parent", parentRef(parent), "code", code, "error", err.Error())
	writeError(w, code, err.Error())
}

// etag identifies a request body for this build of the service and the
// parent's answerInputs: equal bodies give equal answers (when reusable
// says so), and Metacontroller may reuse the answer it cached.
func (h *hookHandler) etag(body, inputs []byte) string {
	sum := hashes.Get().(hash.Hash)
	defer hashes.Put(sum)
	sum.Reset()
	sum.Write(h.prefix) // build, route, hook
	sum.Write(inputs)
	sum.Write(body)
	var digest [etagDigestSize]byte
	var quoted [2*etagDigestSize + 2]byte
	quoted[0], quoted[len(quoted)-1] = '"', '"'
	hex.Encode(quoted[1:], sum.Sum(digest[:0]))
	return string(quoted[:])
}

// hashes are the states of etag's hash, reused: BLAKE3, 256 bits, as
// collision-resistant as SHA-256 and faster on a request here (8,294 bytes:
// 2.8-3.1 µs against SHA-256's 4.8 µs; BENCHMARKS.md, issue 9, ninth pass).
var hashes = sync.Pool{New: func() any { return blake3.New() }}

// etagDigestSize is the size of an ETag's digest, in bytes.
const etagDigestSize = 32

func checkContentType(header string) error {
	if header == "application/json" { // what Metacontroller sends: nothing to parse
		return nil
	}
	if header == "" {
		return errors.New("Content-Type is missing; send the body as application/json")
	}
	mediaType, _, err := mime.ParseMediaType(header)
	if err != nil || mediaType != "application/json" {
		return fmt.Errorf("Content-Type %s is not supported; send the body as application/json", composite.Quote(header))
	}
	return nil
}

// parentRef names the parent in log lines: namespace, name, generation. It is
// decoded only when a line is actually written, so a successful call at the
// default level never parses the parent a second time.
type parentRef json.RawMessage

func (p parentRef) LogValue() slog.Value {
	var parent struct {
		Metadata struct {
			Namespace  string `json:"namespace"`
			Name       string `json:"name"`
			Generation int64  `json:"generation"`
		} `json:"metadata"`
	}
	if len(p) == 0 || json.Unmarshal(p, &parent) != nil {
		return slog.StringValue("unknown")
	}
	m := parent.Metadata
	return slog.GroupValue(slog.String("namespace", logName(m.Namespace)), slog.String("name", logName(m.Name)), slog.Int64("generation", m.Generation))
}

// logName is a name or namespace as a log line shows it: whole when it is
// within the API server's longest name (253), else its quoted prefix and
// size (composite.Quote), so that a huge name, refused with a 422, is not
// written out in full.
func logName(s string) string {
	if len(s) <= validation.DNS1123SubdomainMaxLength {
		return s
	}
	return composite.Quote(s)
}

// statusRecorder remembers the status code written, for metrics and for the
// panic handler (which must not write a second header).
type statusRecorder struct {
	http.ResponseWriter
	code  int
	wrote bool
	// outcome, when set, replaces the code in metrics (codeClientClosed,
	// codeServerTimeout).
	outcome string
}

// Unwrap lets http.ResponseController reach the connection (Flush).
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// label is the code label of the request in metrics.
func (s *statusRecorder) label() string {
	if s.outcome != "" {
		return s.outcome
	}
	return strconv.Itoa(s.code)
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.wrote {
		return
	}
	s.code, s.wrote = code, true
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}
