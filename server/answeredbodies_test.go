package main

import (
	"bytes"
	"crypto/subtle"
	"encoding/binary"
	"io"
	"log/slog"
	"net/http"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestAnsweredBodiesMatches(t *testing.T) {
	body, inputs := []byte(`{"parent":{"spec":{"replicaCount":2}}}`), []byte("key=1")
	route := []byte("build\x00myapp\x00sync\x00")
	cases := map[string]struct {
		reason              string
		etag                string
		route, body, inputs []byte
		nilCache, wantMatch bool
	}{
		"Same":           {reason: "the body and inputs the ETag was remembered with", etag: `"e1"`, route: route, body: body, inputs: inputs, wantMatch: true},
		"OtherBody":      {reason: "a body that only claims the ETag must be hashed", etag: `"e1"`, route: route, body: []byte(`{"parent":{"spec":{"replicaCount":3}}}`), inputs: inputs},
		"PrefixOfBody":   {reason: "a body that begins as the remembered one is another body", etag: `"e1"`, route: route, body: body[:len(body)-1], inputs: inputs},
		"OtherInputs":    {reason: "the service's inputs changed since (a new credentials key): the ETag is another", etag: `"e1"`, route: route, body: body, inputs: []byte("key=2")},
		"NoInputsNow":    {reason: "inputs gone is a change too", etag: `"e1"`, route: route, body: body},
		"OtherRoute":     {reason: "the same body and ETag on another hook (finalize): ETags are per hook", etag: `"e1"`, route: []byte("build\x00myapp\x00finalize\x00"), body: body, inputs: inputs},
		"UnknownETag":    {reason: "an ETag never remembered", etag: `"e2"`, route: route, body: body, inputs: inputs},
		"NilHoldsNoETag": {reason: "a nil cache holds nothing", etag: `"e1"`, route: route, body: body, inputs: inputs, nilCache: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a := newAnsweredBodies(1 << 20)
			a.remember(`"e1"`, route, body, inputs)
			if tc.nilCache {
				a = nil
			}
			if got := a.matches(tc.etag, tc.route, tc.body, tc.inputs); got != tc.wantMatch {
				t.Errorf("%s\nmatches(%s, %q, %q, %q) = %v, want %v", tc.reason, tc.etag, tc.route, tc.body, tc.inputs, got, tc.wantMatch)
			}
		})
	}
}

// TestSameBody: every length around the 64-byte step, a difference at
// every position of each, and in every bit of a byte.
func TestSameBody(t *testing.T) {
	for n := 0; n <= 200; n++ {
		x := make([]byte, n)
		for i := range x {
			x[i] = byte(i*7 + n)
		}
		if !sameBody(x, bytes.Clone(x)) {
			t.Fatalf("sameBody of %d equal bytes = false", n)
		}
		if sameBody(x, append(bytes.Clone(x), 0)) || sameBody(append(bytes.Clone(x), 0), x) {
			t.Fatalf("sameBody of %d bytes and %d = true", n, n+1)
		}
		for i := range x {
			for bit := range 8 {
				y := bytes.Clone(x)
				y[i] ^= 1 << bit
				if sameBody(x, y) {
					t.Fatalf("sameBody of %d bytes differing in bit %d of byte %d = true", n, bit, i)
				}
			}
		}
	}
}

// TestAnsweredBodiesKeepsCopies: the request body is a pooled buffer that
// the next request overwrites; what is remembered must not change with it.
func TestAnsweredBodiesKeepsCopies(t *testing.T) {
	a := newAnsweredBodies(1 << 20)
	buffer, inputs := []byte(`{"a":1}`), []byte("in")
	a.remember(`"e"`, nil, buffer, inputs)
	copy(buffer, `{"b":2}`)
	inputs[0] = 'X'
	if a.matches(`"e"`, nil, buffer, inputs) {
		t.Error("the overwritten buffer matches: the cache kept the caller's memory, not a copy")
	}
	if !a.matches(`"e"`, nil, []byte(`{"a":1}`), []byte("in")) {
		t.Error("the body as it was when remembered does not match")
	}
}

// TestAnsweredBodiesBudget: at most budget bytes are held, the ETag used
// least recently goes first, an ETag remembered again is not counted twice,
// and a body over a sixteenth of the budget is not kept.
func TestAnsweredBodiesBudget(t *testing.T) {
	const budget = 1600
	body := func(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }
	a := newAnsweredBodies(budget)
	held := func() []string {
		var etags []string
		for e := a.recent.Front(); e != nil; e = e.Next() {
			etags = append(etags, e.Value.(*answeredBody).etag)
		}
		return etags
	}
	for _, b := range []byte("abcdefghijklmnop") { // 16 bodies of 100 bytes: the budget
		a.remember(string(b), nil, body(b, 100), nil)
	}
	a.remember("a", nil, body('a', 100), nil) // again: used, not added
	if a.held != budget || a.recent.Len() != 16 {
		t.Fatalf("held %d bytes in %d entries, want %d in 16", a.held, a.recent.Len(), budget)
	}
	if !a.matches("b", nil, body('b', 100), nil) { // b used: c is now the least recent
		t.Fatal("b is not held")
	}
	a.remember("q", nil, body('q', 100), nil)
	want := []string{"q", "b", "a", "p", "o", "n", "m", "l", "k", "j", "i", "h", "g", "f", "e", "d"}
	if diff := cmp.Diff(want, held()); diff != "" {
		t.Errorf("held after one more, most recent first: -want +got:\n%s", diff)
	}
	if a.held != budget || len(a.byETag) != len(want) {
		t.Errorf("held %d bytes, %d in the index; want %d, %d", a.held, len(a.byETag), budget, len(want))
	}
	a.remember("big", nil, body('z', budget/16+1), nil)
	if a.matches("big", nil, body('z', budget/16+1), nil) {
		t.Error("a body over a sixteenth of the budget was kept")
	}
}

// TestHandlerRemembersAnsweredBodies: the handler remembers the body of
// every answer it gives an ETag, and answers a request that names a
// remembered body and carries it 412 from the comparison alone: the ETag
// planted below is no hash of anything, so only the comparison can give it.
// The same ETag with another body is hashed and computed.
func TestHandlerRemembersAnsweredBodies(t *testing.T) {
	handler := &hookHandler{
		parent: parentHooks(testDatabase(t))[0], hook: "sync", maxBodyBytes: 8 << 20,
		now: func() time.Time { return testNow }, log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		metrics: newMetrics(), remembered: newAnsweredBodies(1 << 20),
	}
	body := readFile(t, "testdata/metacontroller/sync-02-children-observed.json")
	first := post(t, handler, "/hooks/myapp/sync", "application/json", body)
	etag := first.Header().Get("ETag")
	if first.Code != 200 || etag == "" {
		t.Fatalf("first call = %d with ETag %q, want 200 with an ETag", first.Code, etag)
	}
	if !handler.remembered.matches(etag, handler.prefix, body, nil) {
		t.Errorf("the body of an answer with ETag %s is not remembered", etag)
	}
	const planted = `"planted"`
	handler.remembered.remember(planted, handler.prefix, body, nil)
	if got := post(t, handler, "/hooks/myapp/sync", "application/json", body, "If-None-Match", planted); got.Code != http.StatusPreconditionFailed || got.Header().Get("ETag") != planted {
		t.Errorf("remembered body with its ETag = %d, ETag %q; want 412 with %s", got.Code, got.Header().Get("ETag"), planted)
	}
	changed := bytes.Replace(body, []byte(`"replicaCount": 2`), []byte(`"replicaCount": 3`), 1)
	if got := post(t, handler, "/hooks/myapp/sync", "application/json", changed, "If-None-Match", planted); got.Code != 200 || got.Header().Get("ETag") == planted {
		t.Errorf("another body with a remembered ETag = %d, ETag %q; want 200, computed, with its own ETag", got.Code, got.Header().Get("ETag"))
	}
}

// TestHandlerRememberedBodyAfterInputsChange: once the answer inputs change
// (a new credentials key read from its file), a remembered body with its
// old ETag is no longer that ETag's: the request is computed anew.
func TestHandlerRememberedBodyAfterInputsChange(t *testing.T) {
	parent := parentHooks(testDatabase(t))[0]
	inputs := []byte("credentials-key=one")
	parent.answerInputs = func() []byte { return inputs }
	handler := &hookHandler{
		parent: parent, hook: "sync", maxBodyBytes: 8 << 20,
		now: func() time.Time { return testNow }, log: slog.New(slog.NewJSONHandler(io.Discard, nil)),
		metrics: newMetrics(), remembered: newAnsweredBodies(1 << 20),
	}
	body := readFile(t, "testdata/metacontroller/sync-02-children-observed.json")
	old := post(t, handler, "/hooks/myapp/sync", "application/json", body).Header().Get("ETag")
	if got := post(t, handler, "/hooks/myapp/sync", "application/json", body, "If-None-Match", old); got.Code != http.StatusPreconditionFailed {
		t.Fatalf("same body and inputs with the ETag = %d, want 412", got.Code)
	}
	inputs = []byte("credentials-key=two")
	got := post(t, handler, "/hooks/myapp/sync", "application/json", body, "If-None-Match", old)
	if got.Code != 200 || got.Header().Get("ETag") == old || got.Header().Get("ETag") == "" {
		t.Errorf("same body, new inputs, old ETag = %d with ETag %q; want 200 with a new ETag (was %s)", got.Code, got.Header().Get("ETag"), old)
	}
}

// BenchmarkSameBody: comparing the captured MyApp request (8.3 KB compact)
// with a copy, as a 412 does; bytes.Equal and crypto/subtle's byte-at-a-time
// ConstantTimeCompare for comparison.
func BenchmarkSameBody(b *testing.B) {
	x := compactJSON(b, readFile(b, "testdata/metacontroller/sync-03-children-with-status.json"))
	y := bytes.Clone(x)
	for _, c := range []struct {
		name  string
		equal func(x, y []byte) bool
	}{
		{"sameBody", sameBody},
		{"bytes.Equal", bytes.Equal},
		{"subtle.ConstantTimeCompare", func(x, y []byte) bool { return subtle.ConstantTimeCompare(x, y) == 1 }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(x)))
			for b.Loop() {
				if !c.equal(x, y) {
					b.Fatal("equal bodies compared unequal")
				}
			}
		})
	}
}

// BenchmarkAnsweredBodiesFull: the heap a full cache of the service's budget
// keeps, filled with distinct bodies of the captured MyApp request's compact
// size (8,294 bytes) and 32 bytes of inputs: held-B is what the budget
// counts, heap-B what the Go heap holds for it (copies rounded up to the
// allocator's size classes, list elements, the index).
func BenchmarkAnsweredBodiesFull(b *testing.B) {
	body, inputs := bytes.Repeat([]byte("x"), 8294), bytes.Repeat([]byte("i"), 32)
	var heap, held float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		a := newAnsweredBodies(answeredBodiesBudget)
		for i := 0; a.held+len(body)+len(inputs) <= a.budget; i++ {
			binary.LittleEndian.PutUint64(body, uint64(i))
			a.remember(strconv.Itoa(i), nil, body, inputs)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap, held = float64(after.HeapAlloc)-float64(before.HeapAlloc), float64(a.held)
		runtime.KeepAlive(a)
	}
	b.ReportMetric(held, "held-B")
	b.ReportMetric(heap, "heap-B")
}
