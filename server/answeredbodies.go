package main

import (
	"bytes"
	"container/list"
	"encoding/binary"
	"sync"
)

// answeredBodies remembers, for the latest ETags the service gave or
// confirmed, what each was computed from: the route's prefix (build, route,
// hook), the answer inputs of then (parentHook.answerInputs) and the request
// body. A request to that route whose If-None-Match is one of them and whose
// body and inputs are byte for byte the same has that ETag: it is answered
// 412 after a comparison (sameBody, in constant time), without hashing its
// body. Any other request is hashed as before, so a body the cache does not
// hold, or one that only shares an ETag, is never answered from it.
//
// It holds at most budget bytes of bodies, evicting the one used least
// recently; a body over a sixteenth of the budget is not kept. The bodies
// are copies, kept in memory only (the Database's carry its Secrets, as the
// request does while it is served), never logged. A nil *answeredBodies
// holds nothing.
type answeredBodies struct {
	budget int

	mu     sync.Mutex
	held   int                      // bytes of the bodies in byETag
	byETag map[string]*list.Element // values *answeredBody
	recent list.List                // front: the most recently given or matched
}

// answeredBody is one remembered ETag with what it was computed from.
type answeredBody struct {
	etag         string
	route        []byte // hookHandler.prefix, shared, never written
	body, inputs []byte
}

func newAnsweredBodies(budget int) *answeredBodies {
	return &answeredBodies{budget: budget, byETag: map[string]*list.Element{}}
}

// answeredBodiesBudget is what the service's answeredBodies hold at most:
// about 500 MyApp requests of 8 KB, or 50 Database requests of 70 KB.
const answeredBodiesBudget = 4 << 20

// matches reports whether etag was remembered for exactly route, body and
// inputs.
func (a *answeredBodies) matches(etag string, route, body, inputs []byte) bool {
	if a == nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.byETag[etag]
	if !ok {
		return false
	}
	if b := e.Value.(*answeredBody); !bytes.Equal(b.route, route) || !bytes.Equal(b.inputs, inputs) || !sameBody(b.body, body) {
		return false
	}
	a.recent.MoveToFront(e)
	return true
}

// remember keeps a copy of body and inputs, and route, as what etag was
// computed from; etag must be the ETag of that body with those inputs on
// that route. An ETag already held is only marked as used.
func (a *answeredBodies) remember(etag string, route, body, inputs []byte) {
	if a == nil || len(body)+len(inputs) > a.budget/16 {
		return
	}
	if a.touch(etag) {
		return // the usual case, a request answered again: nothing copied
	}
	b := &answeredBody{etag: etag, route: route, body: bytes.Clone(body), inputs: bytes.Clone(inputs)}
	a.mu.Lock()
	defer a.mu.Unlock()
	if e, ok := a.byETag[etag]; ok { // remembered meanwhile
		a.recent.MoveToFront(e)
		return
	}
	a.byETag[etag] = a.recent.PushFront(b)
	a.held += len(b.body) + len(b.inputs)
	for a.held > a.budget {
		oldest := a.recent.Back()
		old := a.recent.Remove(oldest).(*answeredBody)
		delete(a.byETag, old.etag)
		a.held -= len(old.body) + len(old.inputs)
	}
}

// touch marks etag as used, reporting whether it is held.
func (a *answeredBodies) touch(etag string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	e, ok := a.byETag[etag]
	if ok {
		a.recent.MoveToFront(e)
	}
	return ok
}

// sameBody reports whether x and y are the same bytes in a time that depends
// on their length only, not on where they first differ: a remembered body
// can carry a Secret's data, and the caller chooses the body it is compared
// with. crypto/subtle.ConstantTimeCompare goes a byte at a time, slower on
// the MyApp request than hashing it; this goes 64 bytes at a time
// (BenchmarkSameBody has all three).
func sameBody(x, y []byte) bool {
	if len(x) != len(y) {
		return false
	}
	y = y[:len(x)]
	var d0, d1, d2, d3 uint64
	i := 0
	for ; i+64 <= len(x); i += 64 {
		xs, ys := x[i:i+64:i+64], y[i:i+64:i+64]
		d0 |= binary.LittleEndian.Uint64(xs[0:]) ^ binary.LittleEndian.Uint64(ys[0:])
		d1 |= binary.LittleEndian.Uint64(xs[8:]) ^ binary.LittleEndian.Uint64(ys[8:])
		d2 |= binary.LittleEndian.Uint64(xs[16:]) ^ binary.LittleEndian.Uint64(ys[16:])
		d3 |= binary.LittleEndian.Uint64(xs[24:]) ^ binary.LittleEndian.Uint64(ys[24:])
		d0 |= binary.LittleEndian.Uint64(xs[32:]) ^ binary.LittleEndian.Uint64(ys[32:])
		d1 |= binary.LittleEndian.Uint64(xs[40:]) ^ binary.LittleEndian.Uint64(ys[40:])
		d2 |= binary.LittleEndian.Uint64(xs[48:]) ^ binary.LittleEndian.Uint64(ys[48:])
		d3 |= binary.LittleEndian.Uint64(xs[56:]) ^ binary.LittleEndian.Uint64(ys[56:])
	}
	d := d0 | d1 | d2 | d3
	for ; i < len(x); i++ {
		d |= uint64(x[i] ^ y[i])
	}
	return d == 0
}
