package composite

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"sync"
	"unsafe"
)

// The decoder's reading of JSON text. A scanner walks a request body (or
// one object of it) and says where each value ends, taking exactly the JSON
// that encoding/json takes: RFC 8259, with invalid UTF-8 inside strings
// allowed, and at most maxScanDepth nested arrays and objects. Where asked,
// it also refuses a name repeated in an object, names compared as
// encoding/json unquotes them. It builds nothing: strings are checked, not
// unquoted (but the names it compares, when they hold an escape or a byte
// outside ASCII), so skipping a long string (a script in a pod spec, an
// annotation holding a whole object) costs a read of its bytes, eight at a
// time.
//
// jsontext, which the typed decode uses, reads a byte at a time and keeps a
// namespace for every object: BenchmarkScanner compares the two on the
// captured MyApp and Database requests (BENCHMARKS.md, issue 9, eighth
// pass: 0.5-0.85 of its time, a third to a half fewer instructions).

// maxScanDepth is encoding/json's limit of nested arrays and objects; past
// it the scanner refuses, and the slow decoder gives the error.
const maxScanDepth = 10000

// scanner reads the JSON text in data. Its methods take the offset of the
// first byte of what they read and return the offset after it; false means
// the text is not JSON as encoding/json reads it there (or, with names
// checked, repeats a name), and nothing after it may be trusted.
type scanner struct {
	data  []byte
	depth int
	// open is skip's stack of the arrays and objects it is in.
	open []byte
	// names are the names read so far in each object whose names are
	// checked, the innermost last (nameSet says where each begins).
	names []string
	// What the cost walk (decodecost.go) learnt of the values it read, for
	// the decode that follows it on the same scanner: the ends of long
	// values left out (skips), so each is read once, and the number of
	// elements or members of each array and object (counts), so a slice
	// or map is made at its size without counting it again.
	skips, counts marks
}

// marks are facts about values at their offsets, in the order the values
// begin, which is the order the decode reads them in.
type marks struct {
	at, fact []int
	next     int // the first not passed
}

// add notes a fact about the value at i (values begin in ascending order)
// and returns its index, for set.
func (m *marks) add(i, fact int) int {
	m.at, m.fact = append(m.at, i), append(m.fact, fact)
	return len(m.at) - 1
}

func (m *marks) set(k, fact int) { m.fact[k] = fact }

// of is the fact noted about the value at i, if any; marks before i are
// passed.
func (m *marks) of(i int) (int, bool) {
	for m.next < len(m.at) && m.at[m.next] < i {
		m.next++
	}
	if m.next < len(m.at) && m.at[m.next] == i {
		m.next++
		return m.fact[m.next-1], true
	}
	return 0, false
}

func (m *marks) reset() { m.at, m.fact, m.next = m.at[:0], m.fact[:0], 0 }

// skipLen is the shortest value a skip is kept for.
const skipLen = 64

// scanners are reused: names keeps its array.
var scanners = sync.Pool{New: func() any { return new(scanner) }}

// newScanner is a pooled scanner of data; release gives it back.
func newScanner(data []byte) *scanner {
	s := scanners.Get().(*scanner)
	s.data, s.depth, s.names = data, 0, s.names[:0]
	s.skips.reset()
	s.counts.reset()
	return s
}

// release gives s back to the pool; nothing it returned may be used after.
func (s *scanner) release() {
	s.data = nil
	clear(s.names[:cap(s.names)]) // the names may point into data
	scanners.Put(s)
}

// ws returns the offset of the first byte at or after i that is not JSON
// white space.
func (s *scanner) ws(i int) int {
	for i < len(s.data) {
		switch c := s.data[i]; {
		case c > ' ': // most often, in the compact JSON Metacontroller sends
			return i
		case isJSONSpace(c):
			i++
		default:
			return i
		}
	}
	return i
}

// isJSONSpace reports whether c is JSON white space.
func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// trimJSONSpace is data without the JSON white space (space, tab, CR and
// LF, and nothing else: bytes.TrimSpace would take a form feed or U+00A0,
// which encoding/json refuses) before and after it.
func trimJSONSpace(data []byte) []byte {
	for len(data) > 0 && isJSONSpace(data[0]) {
		data = data[1:]
	}
	for len(data) > 0 && isJSONSpace(data[len(data)-1]) {
		data = data[:len(data)-1]
	}
	return data
}

// value reads the value that begins at i (white space already skipped).
// With checkNames, a name repeated in any object inside it is refused.
func (s *scanner) value(i int, checkNames bool) (int, bool) {
	if i >= len(s.data) {
		return i, false
	}
	if !checkNames {
		return s.skip(i)
	}
	switch c := s.data[i]; c {
	case '{':
		return s.members(i, nil)
	case '[':
		return s.elements(i, nil)
	case '"':
		end, _, ok := s.str(i)
		return end, ok
	case 't':
		return s.literal(i, "true")
	case 'f':
		return s.literal(i, "false")
	case 'n':
		return s.literal(i, "null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			return s.number(i)
		}
		return i, false
	}
}

// skip is value without names checked: one loop over the value's tokens,
// which keeps what it is inside (an object or an array) in s.open, not in
// calls. Most of a request is read so (the controller, children kept raw,
// managedFields).
func (s *scanner) skip(i int) (int, bool) {
	data := s.data
	open := s.open[:0]
	defer func() { s.open = open[:0] }()
	for {
		// A value begins at i.
		if i >= len(data) {
			return i, false
		}
		var ok bool
		switch c := data[i]; c {
		case '{', '[':
			if len(open)+s.depth >= maxScanDepth {
				return i, false
			}
			open = append(open, c)
			if i = s.ws(i + 1); i < len(data) && data[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				open = open[:len(open)-1]
				i, ok = i+1, true
				break
			}
			if c == '{' {
				if _, _, i, ok = s.memberName(i); !ok {
					return i, false
				}
			}
			continue
		case '"':
			i, _, ok = s.str(i)
		case 't':
			i, ok = s.literal(i, "true")
		case 'f':
			i, ok = s.literal(i, "false")
		case 'n':
			i, ok = s.literal(i, "null")
		default:
			if c != '-' && (c < '0' || '9' < c) {
				return i, false
			}
			i, ok = s.number(i)
		}
		if !ok {
			return i, false
		}
		// A value ended at i: what comes after it closes or continues
		// what it is in.
		for {
			if len(open) == 0 {
				return i, true
			}
			if i = s.ws(i); i >= len(data) {
				return i, false
			}
			top := open[len(open)-1]
			if data[i] == top+2 {
				open = open[:len(open)-1]
				i++
				continue
			}
			if data[i] != ',' {
				return i, false
			}
			i = s.ws(i + 1)
			if top == '{' {
				if _, _, i, ok = s.memberName(i); !ok {
					return i, false
				}
			}
			break
		}
	}
}

// memberName reads an object member's name at i and the colon after it:
// the name's end (its closing quote read) and whether it is plain (str), and
// the offset of the member's value, within the data.
func (s *scanner) memberName(i int) (nameEnd int, plain bool, valueAt int, ok bool) {
	if i >= len(s.data) || s.data[i] != '"' {
		return i, false, i, false
	}
	if nameEnd, plain, ok = s.str(i); !ok {
		return nameEnd, false, nameEnd, false
	}
	valueAt = s.ws(nameEnd)
	if valueAt >= len(s.data) || s.data[valueAt] != ':' {
		return nameEnd, false, valueAt, false
	}
	if valueAt = s.ws(valueAt + 1); valueAt >= len(s.data) {
		return nameEnd, false, valueAt, false
	}
	return nameEnd, plain, valueAt, true
}

// memberReader reads the value of one object member, which begins at valueAt
// (within the data), and returns the offset after it; name is the member's name as
// encoding/json unquotes it (valid only during the call), rawName the name
// as written, quotes included.
type memberReader func(name string, rawName []byte, valueAt int) (int, bool)

// members reads the object that begins at i, refusing a name given twice,
// calling read for each member (nil: each value is read with value, names
// checked), and returns the offset after its '}'. The values' own objects
// are checked only as read (or value) does. (An object whose names are not
// checked is read by skip.)
func (s *scanner) members(i int, read memberReader) (int, bool) {
	set := nameSet{start: len(s.names)}
	end, ok := s.eachMember(i, func(nameAt, nameEnd int, plain bool, valueAt int) (int, bool) {
		name, ok := s.name(nameAt, nameEnd, plain)
		if !ok || !set.add(s, name) {
			return nameAt, false
		}
		if read != nil {
			return read(name, s.data[nameAt:nameEnd], valueAt)
		}
		return s.value(valueAt, true)
	})
	if ok {
		s.names = s.names[:set.start] // after a failure nothing is read on
	}
	return end, ok
}

// mapMembers is members for an object decoded into a map, whose names the
// map itself tells apart: seen reports a name read before (a key of the
// map, or one dropped), and no name set is kept beside it (issue 30: for
// 91,136 labels it took 7.2 MB more).
func (s *scanner) mapMembers(i int, seen func(name string) bool, read func(name string, at int) (int, bool)) (int, bool) {
	return s.eachMember(i, func(nameAt, nameEnd int, plain bool, at int) (int, bool) {
		name, ok := s.name(nameAt, nameEnd, plain)
		if !ok || seen(name) {
			return nameAt, false
		}
		return read(name, at)
	})
}

// count is how many elements or members the array or object at i has, as
// the cost walk noted it or else counted now; 0 when it is not JSON (the
// read that follows fails there).
func (s *scanner) count(i int) int {
	if n, noted := s.counts.of(i); noted && n >= 0 {
		return n
	}
	n, depth := 0, s.depth
	each := func(at int) (int, bool) {
		n++
		return s.skip(at)
	}
	var ok bool
	if s.data[i] == '{' {
		_, ok = s.eachMember(i, func(_, _ int, _ bool, at int) (int, bool) { return each(at) })
	} else {
		_, ok = s.elements(i, each)
	}
	s.depth = depth
	if !ok {
		return 0
	}
	return n
}

// eachMember reads the object that begins at i, calling member for each
// member with where its name (quotes included) and its value begin and end
// (plain as str says), and returns the offset after its '}'. It checks the
// object's syntax and depth, not its names: member does.
func (s *scanner) eachMember(i int, member func(nameAt, nameEnd int, plain bool, valueAt int) (int, bool)) (int, bool) {
	if !s.enter() {
		return i, false
	}
	i = s.ws(i + 1)
	if i < len(s.data) && s.data[i] == '}' {
		s.depth--
		return i + 1, true
	}
	for {
		nameAt := i
		nameEnd, plain, valueAt, ok := s.memberName(i)
		if !ok {
			return valueAt, false
		}
		if i, ok = member(nameAt, nameEnd, plain, valueAt); !ok {
			return i, false
		}
		var more bool
		if i, more, ok = s.after(i, '}'); !ok {
			return i, false
		}
		if !more {
			return i, true
		}
	}
}

// elements reads the array that begins at i, reading each element with
// read (nil: with value, names checked; it is called with an offset within
// the data), and returns the offset after its ']'.
func (s *scanner) elements(i int, read func(i int) (int, bool)) (int, bool) {
	if !s.enter() {
		return i, false
	}
	i = s.ws(i + 1)
	if i < len(s.data) && s.data[i] == ']' {
		s.depth--
		return i + 1, true
	}
	for {
		if i >= len(s.data) {
			return i, false
		}
		var ok bool
		if read != nil {
			i, ok = read(i)
		} else {
			i, ok = s.value(i, true)
		}
		if !ok {
			return i, false
		}
		var more bool
		if i, more, ok = s.after(i, ']'); !ok {
			return i, false
		}
		if more {
			continue
		}
		return i, true
	}
}

// after reads what follows a member or an element at i: a comma (more:
// the offset of the next one) or closing, which ends the object or array
// (the offset after it).
func (s *scanner) after(i int, closing byte) (next int, more, ok bool) {
	if i = s.ws(i); i < len(s.data) {
		switch s.data[i] {
		case ',':
			return s.ws(i + 1), true, true
		case closing:
			s.depth--
			return i + 1, false, true
		}
	}
	return i, false, false
}

// enter counts one more array or object open, refusing past maxScanDepth.
func (s *scanner) enter() bool {
	s.depth++
	return s.depth <= maxScanDepth
}

// name is the name (or any string) whose quoted form is data[start:end],
// as encoding/json unquotes it. A plain name (no escape, nothing outside ASCII) is a view of
// data; another is unquoted by encoding/json itself, which turns invalid
// UTF-8 and lone surrogates into U+FFFD.
func (s *scanner) name(start, end int, plain bool) (string, bool) {
	if plain {
		return unsafe.String(&s.data[start+1], end-start-2), true
	}
	var name string
	err := json.Unmarshal(s.data[start:end], &name)
	return name, err == nil
}

// nameSet is the names of one object whose names are checked: the names
// from start on in scanner.names, or, once there are more than
// linearNames, a map of them.
type nameSet struct {
	start int
	many  map[string]struct{}
}

// linearNames is how many names an object's names are searched one by one
// before they go into a map: Kubernetes objects have a few dozen members at
// most, a ConfigMap's data or a set of labels may have hundreds.
const linearNames = 32

// add adds name, reporting false when the object already has it.
func (set *nameSet) add(s *scanner, name string) bool {
	if set.many == nil {
		names := s.names[set.start:]
		for _, n := range names {
			if n == name {
				return false
			}
		}
		if len(names) < linearNames {
			s.names = append(s.names, name)
			return true
		}
		set.many = make(map[string]struct{}, 2*linearNames)
		for _, n := range names {
			set.many[n] = struct{}{}
		}
	}
	if _, ok := set.many[name]; ok {
		return false
	}
	set.many[string([]byte(name))] = struct{}{} // a copy: a view of data may not outlive the scan
	return true
}

// Masks for reading eight bytes at a time.
const (
	onesBytes = 0x0101010101010101
	highBits  = 0x8080808080808080
)

// str reads the string that begins at i (its opening quote) and returns the
// offset after its closing quote, and whether it is plain: no escape and
// no byte outside ASCII, so its bytes are its value. Control characters
// must be escaped, and an escape must be one of JSON's; other bytes are
// taken as they are, invalid UTF-8 included (encoding/json takes it too).
func (s *scanner) str(i int) (end int, plain bool, ok bool) {
	data := s.data
	i++
	plain = true
	for {
		// Eight bytes at a time, until one of them is a quote, a
		// backslash, a control character or outside ASCII.
		for i+8 <= len(data) {
			if mask := specialBytes(load8(data, i), false); mask != 0 {
				i += bits.TrailingZeros64(mask) / 8
				break
			}
			i += 8
		}
		if i >= len(data) {
			return i, false, false
		}
		switch c := data[i]; {
		case c == '"':
			return i + 1, plain, true
		case c == '\\':
			plain = false
			if i+1 >= len(data) {
				return i, false, false
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) || !hex4(data[i+2:i+6]) {
					return i, false, false
				}
				i += 6
			default:
				return i, false, false
			}
		case c < 0x20:
			return i, false, false
		case c >= 0x80:
			plain = false
			i++
		default:
			i++
		}
	}
}

// specialBytes has the high bit of a byte set where the eight bytes of x (in
// little-endian order) hold a quote, a backslash, a control character or a
// byte outside ASCII, and with html also <, > or &: the bytes a JSON string
// cannot hold as they are (or encoding/json's HTML escaping escapes). A
// byte above one flagged may be flagged too (a borrow); the lowest flagged
// byte is always one of those.
//
// Each term subtracts from every byte at once: a byte equal to the one
// sought (zero after the xor) or below 0x20 wraps and sets its high bit. A
// byte of ASCII that does not wrap stays below 0x80, so no term needs the
// usual "and not v"; a byte outside ASCII keeps its high bit in the quote's
// term or, the one byte it would lose it in there (0xa2), in the
// backslash's; a wrap borrows from the byte above, which only flags bytes
// above it. TestSpecialBytes holds it to a byte-at-a-time reading.
func specialBytes(x uint64, html bool) uint64 {
	mask := wraps(x^(onesBytes*'"')) | wraps(x^(onesBytes*'\\')) | (x - onesBytes*0x20)
	if html {
		mask |= wraps(x^(onesBytes*'<')) | wraps(x^(onesBytes*'>')) | wraps(x^(onesBytes*'&'))
	}
	return mask & highBits
}

// load8 is the eight bytes of data from i on, little-endian, in one load
// and without the bounds checks of data[i:]: the caller has checked that
// i+8 <= len(data).
func load8(data []byte, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(data)), i))[:])
}

// wraps subtracts one from every byte of v: a zero byte wraps to 0xff.
func wraps(v uint64) uint64 { return v - onesBytes }

// hex4 reports four hexadecimal digits.
func hex4(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// number reads the number that begins at i: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number(i int) (int, bool) {
	data := s.data
	if data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && '1' <= data[i] && data[i] <= '9':
		i = s.digits(i + 1)
	default:
		return i, false
	}
	if i < len(data) && data[i] == '.' {
		end := s.digits(i + 1)
		if end == i+1 {
			return end, false
		}
		i = end
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		end := s.digits(i)
		if end == i {
			return end, false
		}
		i = end
	}
	return i, true
}

// digits returns the offset of the first byte at or after i that is not a
// decimal digit.
func (s *scanner) digits(i int) int {
	for i < len(s.data) && '0' <= s.data[i] && s.data[i] <= '9' {
		i++
	}
	return i
}

// literal reads word (true, false or null) at i.
func (s *scanner) literal(i int, word string) (int, bool) {
	end := i + len(word)
	if end > len(s.data) || string(s.data[i:end]) != word {
		return i, false
	}
	return end, true
}
