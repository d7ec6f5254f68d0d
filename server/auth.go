package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// unauthorizedMessage is the whole body of every refusal: it says neither
// which credential was wrong nor anything of the request.
const unauthorizedMessage = "credentials are missing or wrong"

// A refused request is answered at once and its connection closed: after
// the 401 (Connection: close) and the end of the server's side, what the
// client still sends is read and dropped until it closes, for at most
// refusalReadBytes and refusalLinger, then the connection closes. The read
// lets a client that sent a small body in one go (most do) see the 401 and
// a clean close, not a reset; one that sends more than refusalReadBytes
// gets the rest of refusalLinger, unread, to read the 401 before the close
// resets it (Go's client, sending 1 MiB, otherwise often reports the
// broken pipe instead of the 401). The bounds keep a client without
// credentials from holding a connection slot (--max-connections) longer
// than refusalLinger, whatever body it declares or trickles.
const (
	refusalReadBytes = 64 << 10
	refusalLinger    = 100 * time.Millisecond
)

// authenticator decides whether a hook request comes from Metacontroller:
// a bearer token from the token file, a client certificate from the client
// CA, or both when both are configured. A nil *authenticator admits every
// request (--insecure-allow-unauthenticated).
type authenticator struct {
	tokens *tokenSet // nil: no bearer token is asked for
	// clientCert: a certificate the client CA signed must have been verified
	// during the TLS handshake (tls.VerifyClientCertIfGiven).
	clientCert bool
}

// allows reports whether r carries every credential the authenticator asks for.
func (a *authenticator) allows(r *http.Request) bool {
	if a == nil {
		return true
	}
	ok := true
	if a.clientCert && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
		ok = false
	}
	if a.tokens != nil && !a.tokens.allows(r.Header.Values("Authorization")) {
		ok = false
	}
	return ok
}

// protect wraps the handler of one hook route: a request without the right
// credentials gets 401 and is counted, and its connection is closed (see
// refuse); the hook never runs.
func (a *authenticator) protect(parent, hook string, m *metrics, next http.Handler) http.Handler {
	if a == nil {
		return next
	}
	refusals := m.unauthorized.WithLabelValues(parent, hook)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.allows(r) {
			refusals.Inc()
			refuse(w, a.tokens != nil)
			return
		}
		trust(r)
		next.ServeHTTP(w, r)
	})
}

// refuse answers 401 with unauthorizedMessage (and WWW-Authenticate: Bearer
// when tokens are asked for) and closes the connection at once. On HTTP/1
// (the only protocol of the hook port: tlsSource offers http/1.1 alone) it
// takes the connection over, since net/http, once the handler returns,
// reads up to 256 KiB of an unread body for up to the read deadline
// (--request-timeout) before it closes: it writes the answer, ends its
// side, reads what the client still sends (refusalReadBytes, refusalLinger)
// and closes. Where there is no connection to take over
// (HTTP/2, a test's recorder) the answer asks net/http to close
// (Connection: close) and a read deadline already past stops its read.
func refuse(w http.ResponseWriter, bearer bool) {
	answer := &recordedAnswer{header: http.Header{}}
	if bearer {
		answer.header.Set("WWW-Authenticate", "Bearer")
	}
	writeError(answer, http.StatusUnauthorized, unauthorizedMessage)
	answerAndClose(w, answer)
}

// answerAndClose sends answer, with Connection: close, and closes the
// connection as refuse does: what the client still sends is read for at
// most refusalReadBytes and refusalLinger, never for --request-timeout.
func answerAndClose(w http.ResponseWriter, answer *recordedAnswer) {
	answer.header.Set("Connection", "close")
	if answer.code == 0 {
		answer.code = http.StatusOK
	}
	rc := http.NewResponseController(w)
	conn, buffered, err := rc.Hijack()
	if err != nil {
		for k, v := range answer.header {
			w.Header()[k] = v
		}
		w.WriteHeader(answer.code)
		_, _ = w.Write(answer.body)
		_ = rc.Flush()
		_ = rc.SetReadDeadline(time.Now())
		return
	}
	defer conn.Close()
	now := time.Now()
	_ = conn.SetWriteDeadline(now.Add(writeMargin))
	_ = conn.SetReadDeadline(now.Add(refusalLinger))
	answer.header.Set("Date", now.UTC().Format(http.TimeFormat))
	resp := &http.Response{
		StatusCode: answer.code, ProtoMajor: 1, ProtoMinor: 1, Close: true,
		Header: answer.header, ContentLength: int64(len(answer.body)), Body: io.NopCloser(bytes.NewReader(answer.body)),
	}
	if resp.Write(buffered) != nil || buffered.Flush() != nil {
		return
	}
	closeWrite(conn)
	if _, err := io.CopyN(io.Discard, buffered.Reader, refusalReadBytes); err == nil {
		// More is coming: read no more, but give the client the rest of
		// refusalLinger to read the 401 before the close resets it.
		time.Sleep(time.Until(now.Add(refusalLinger)))
	}
}

// closeUnreadBodies answers every request that declares a body (a
// Content-Length or chunked) and that read does not name through
// answerAndClose: the handler answers into a recordedAnswer, and the
// connection is closed with at most refusalReadBytes of the body read.
// Without it net/http reads up to 256 KiB of an unread body for up to the
// read deadline (--request-timeout) after the handler returns, and a
// connection whose header has arrived is never the one a full connection
// cap evicts: slow bodies sent without credentials to a 404, a 405, a probe
// or /metrics would hold every slot Metacontroller needs.
func closeUnreadBodies(read func(*http.Request) bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength == 0 || read(r) {
			next.ServeHTTP(w, r)
			return
		}
		answer := &recordedAnswer{header: http.Header{}}
		next.ServeHTTP(answer, r)
		answerAndClose(w, answer)
	})
}

// recordedAnswer is the http.ResponseWriter refuse has writeError write
// into, so that the 401 is the same on either path.
type recordedAnswer struct {
	header http.Header
	code   int
	body   []byte
}

func (a *recordedAnswer) Header() http.Header { return a.header }
func (a *recordedAnswer) WriteHeader(code int) {
	if a.code == 0 {
		a.code = code
	}
}
func (a *recordedAnswer) Write(p []byte) (int, error) {
	if a.code == 0 {
		a.code = http.StatusOK
	}
	a.body = append(a.body, p...)
	return len(p), nil
}

// closeWrite ends the server's side of a taken-over connection (TLS
// close_notify, then the TCP FIN) and leaves its reading side open.
func closeWrite(c net.Conn) {
	if tlsConn, ok := c.(*tls.Conn); ok {
		_ = tlsConn.CloseWrite()
		c = tlsConn.NetConn()
	}
	if lc, ok := c.(*limitedConn); ok {
		c = lc.Conn
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// tokenSet holds the SHA-256 digests of the accepted bearer tokens. Digests
// make every comparison the same length; each request is compared with every
// token, in constant time, without stopping at a match.
type tokenSet struct {
	digests atomic.Pointer[[][sha256.Size]byte]
}

func (s *tokenSet) allows(headers []string) bool {
	if len(headers) != 1 {
		return false
	}
	scheme, token, found := strings.Cut(headers[0], " ")
	token = strings.TrimSpace(token)
	if !found || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return false
	}
	given := sha256.Sum256([]byte(token))
	match := 0
	for _, digest := range *s.digests.Load() {
		match |= subtle.ConstantTimeCompare(given[:], digest[:])
	}
	return match == 1
}

// load reads a token file: one token per line; blank lines and lines
// starting with # are ignored, surrounding white space is trimmed. Errors
// name the file and the line, never a token. What is accepted afterwards:
//
//   - the file read: exactly the tokens it lists;
//   - the file missing or unreadable: no token at all (fail closed: the
//     file may have been deleted to revoke them);
//   - the file read but with a line that is no token: only the tokens both
//     accepted before and still listed in the file. A bad file grants
//     nothing new, and keeps nothing it no longer lists, while the tokens
//     it still lists keep working (a typo in a rotation does not lock
//     Metacontroller out).
//
// At start (nothing accepted before) either error accepts nothing, and
// newTokenSet stops the process.
func (s *tokenSet) load(path string) (int, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		s.store(nil)
		return 0, fmt.Errorf("cannot read the token file, so no token is accepted until it is back: %w", err)
	}
	digests, badLine := parseTokens(raw)
	if badLine != 0 && s.digests.Load() == nil {
		return 0, fmt.Errorf("%s line %d: a token has no white space inside", path, badLine)
	}
	if badLine != 0 {
		kept := s.keepListed(digests)
		return kept, fmt.Errorf("%s line %d: a token has no white space inside; accepting only the %d tokens both loaded before and still listed", path, badLine, kept)
	}
	s.store(digests)
	return len(digests), nil
}

// parseTokens reads the digests of the tokens of a token file, and the
// number of its first line that is no token (0: none).
func parseTokens(raw []byte) (digests [][sha256.Size]byte, badLine int) {
	lines := bufio.NewScanner(bytes.NewReader(raw))
	lines.Buffer(nil, len(raw)+1) // a line as long as the file is still a line
	for n := 1; lines.Scan(); n++ {
		line := strings.TrimSpace(lines.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.ContainsAny(line, " \t") {
			if badLine == 0 {
				badLine = n
			}
			continue
		}
		digests = append(digests, sha256.Sum256([]byte(line)))
	}
	return digests, badLine
}

func (s *tokenSet) store(digests [][sha256.Size]byte) { s.digests.Store(&digests) }

// keepListed narrows the accepted tokens to those also in listed, and
// returns how many are left.
func (s *tokenSet) keepListed(listed [][sha256.Size]byte) int {
	var kept [][sha256.Size]byte
	if current := s.digests.Load(); current != nil {
		for _, digest := range *current {
			if slices.Contains(listed, digest) {
				kept = append(kept, digest)
			}
		}
	}
	s.store(kept)
	return len(kept)
}

// newTokenSet reads the token file and re-reads it whenever it changes until
// ctx is done (watchFiles, under role in the reload metrics). A file that
// does not load or holds no token at start is an error; one that loses
// every token later refuses every request (fail closed) and counts as a
// failed reload, so the reload gauge and counter show it; what a file that
// does not load later keeps is load's.
func newTokenSet(ctx context.Context, path, role string, interval time.Duration, reloads *configReloads, log *slog.Logger) (*tokenSet, error) {
	s := &tokenSet{}
	n, err := s.load(path)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, errors.New(path + " holds no token (one per line; blank lines and # comments are ignored)")
	}
	watchFiles(ctx, interval, watched{role: role, what: "bearer tokens", paths: []string{path}, reloads: reloads}, func() error {
		n, err := s.load(path)
		if err == nil && n == 0 {
			return errors.New(path + " holds no token: every request it guards is refused until it lists one")
		}
		return err
	}, log)
	return s, nil
}
