package composite

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// cleaner rewrites one JSON document into clean apply JSON in a single
// streaming pass over its tokens: nulls and empty objects dropped (an object
// member whose name is in keepWhenEmpty keeps its empty object), object
// members sorted by name, optionally the top-level "status" dropped. Strings
// and numbers are copied byte for byte, so the output escapes exactly as the
// marshaller that wrote the input did; for encoding/json's output the result
// is what decoding into map[string]any (UseNumber), pruning and marshalling
// again gives, without building the maps. Array items are never dropped (a
// list position means something): an item that cleans to nothing becomes {}
// and a null item stays null.
//
// A cleaner keeps its scratch buffers between documents; it is not safe for
// concurrent use (cleaners come from cleanerPool).
type cleaner struct {
	dec     jsontext.Decoder
	reader  bytes.Reader
	scratch [][]byte   // per object depth: the members as read
	members [][]member // per object depth: where each member is in scratch
}

// member is one object member in its depth's scratch buffer.
type member struct {
	name     [2]int // the quoted name, verbatim
	key      [2]int // the name unquoted, for sorting
	value    [2]int // the cleaned value
	position int    // order in the input, so a repeated name keeps its last value
}

var cleanerPool = sync.Pool{New: func() any { return new(cleaner) }}

// decodeOptions: the input is marshaller output, so names are unique and
// UTF-8 valid; checking either again would only cost time. A repeated name
// is still handled (the last one wins, as a map would have it).
var decodeOptions = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// cleanJSON appends the clean form of raw to dst. dropStatus drops the
// top-level "status" member. A document that cleans to nothing is {}.
func cleanJSON(dst, raw []byte, dropStatus bool) ([]byte, error) {
	c := cleanerPool.Get().(*cleaner)
	defer cleanerPool.Put(c)
	c.reader.Reset(raw)
	c.dec.Reset(&c.reader, decodeOptions...)
	start := len(dst)
	out, keep, err := c.value(dst, 0, dropStatus)
	if err != nil {
		return dst[:start], err
	}
	if !keep {
		out = append(out[:start], "{}"...)
	}
	if _, err := c.dec.ReadToken(); err != io.EOF {
		return dst[:start], errors.New("more than one JSON value")
	}
	return out, nil
}

// cleanValue appends the clean form of raw, one value inside a document
// (never the top level), and says what it left: a null or an object that
// cleans to nothing is not written.
func cleanValue(dst, raw []byte) ([]byte, outcome, error) {
	c := cleanerPool.Get().(*cleaner)
	defer cleanerPool.Put(c)
	c.reader.Reset(raw)
	c.dec.Reset(&c.reader, decodeOptions...)
	start := len(dst)
	kind := c.dec.PeekKind()
	out, keep, err := c.value(dst, 0, false)
	if err != nil {
		return dst[:start], written, err
	}
	if _, err := c.dec.ReadToken(); err != io.EOF {
		return dst[:start], written, errors.New("more than one JSON value")
	}
	switch {
	case keep:
		return out, written, nil
	case kind == '{':
		return dst[:start], emptyObject, nil
	}
	return dst[:start], nullValue, nil
}

// value appends the clean form of the next value to dst and reports whether
// it is kept; when it is not, dst comes back unchanged.
func (c *cleaner) value(dst []byte, depth int, dropStatus bool) ([]byte, bool, error) {
	switch c.dec.PeekKind() {
	case '{':
		return c.object(dst, depth, dropStatus)
	case '[':
		return c.array(dst, depth)
	case 'n':
		_, err := c.dec.ReadValue()
		return dst, false, err
	case 0:
		_, err := c.dec.ReadToken() // reports the syntax error
		if err == nil {
			err = errors.New("unexpected end of JSON")
		}
		return dst, false, err
	default: // string, number, true, false: verbatim
		v, err := c.dec.ReadValue()
		return append(dst, v...), err == nil, err
	}
}

func (c *cleaner) array(dst []byte, depth int) ([]byte, bool, error) {
	if _, err := c.dec.ReadToken(); err != nil {
		return dst, false, err
	}
	dst = append(dst, '[')
	for i := 0; c.dec.PeekKind() != ']'; i++ {
		if i > 0 {
			dst = append(dst, ',')
		}
		kind := c.dec.PeekKind()
		var keep bool
		var err error
		dst, keep, err = c.value(dst, depth, false)
		switch {
		case err != nil:
			return dst, false, err
		case !keep && kind == '{':
			dst = append(dst, "{}"...)
		case !keep:
			dst = append(dst, "null"...)
		}
	}
	if _, err := c.dec.ReadToken(); err != nil {
		return dst, false, err
	}
	return append(dst, ']'), true, nil
}

func (c *cleaner) object(dst []byte, depth int, dropStatus bool) ([]byte, bool, error) {
	if _, err := c.dec.ReadToken(); err != nil {
		return dst, false, err
	}
	for len(c.scratch) <= depth {
		c.scratch = append(c.scratch, nil)
		c.members = append(c.members, nil)
	}
	buf, members := c.scratch[depth][:0], c.members[depth][:0]
	defer func() { c.scratch[depth], c.members[depth] = buf[:0], members[:0] }()
	for position := 0; c.dec.PeekKind() != '}'; position++ {
		name, err := c.dec.ReadValue()
		if err != nil {
			return dst, false, err
		}
		m := member{position: position}
		m.name[0] = len(buf)
		buf = append(buf, name...)
		m.name[1] = len(buf)
		m.key = [2]int{m.name[0] + 1, m.name[1] - 1}
		if bytes.IndexByte(name, '\\') >= 0 || !utf8.Valid(name) {
			// Sorted and compared as encoding/json reads the name: an
			// escape undone, a byte that is not UTF-8 as U+FFFD (the
			// name itself is still written as it came).
			m.key[0] = len(buf)
			if buf, err = jsontext.AppendUnquote(buf, name); err != nil {
				// Invalid UTF-8 (jsontext refuses it): encoding/json's
				// own reading, which replaces it.
				var key string
				if json.Unmarshal(name, &key) != nil {
					return dst, false, err
				}
				buf = append(buf[:m.key[0]], key...)
			}
			m.key[1] = len(buf)
		}
		key := buf[m.key[0]:m.key[1]]
		if dropStatus && string(key) == "status" {
			if err := c.dec.SkipValue(); err != nil {
				return dst, false, err
			}
			buf = buf[:m.name[0]]
			continue
		}
		kind := c.dec.PeekKind()
		m.value[0] = len(buf)
		var keep bool
		if buf, keep, err = c.value(buf, depth+1, false); err != nil {
			return dst, false, err
		}
		if !keep {
			if kind != '{' || !keepWhenEmpty[string(buf[m.key[0]:m.key[1]])] {
				buf = buf[:m.name[0]]
				continue
			}
			buf = append(buf[:m.value[0]], "{}"...)
		}
		m.value[1] = len(buf)
		members = append(members, m)
	}
	if _, err := c.dec.ReadToken(); err != nil {
		return dst, false, err
	}
	if len(members) == 0 {
		return dst, false, nil
	}
	slices.SortFunc(members, func(a, b member) int {
		if n := bytes.Compare(buf[a.key[0]:a.key[1]], buf[b.key[0]:b.key[1]]); n != 0 {
			return n
		}
		return a.position - b.position
	})
	dst = append(dst, '{')
	written := 0
	for i, m := range members {
		if i+1 < len(members) && bytes.Equal(buf[m.key[0]:m.key[1]], buf[members[i+1].key[0]:members[i+1].key[1]]) {
			continue // a later member of the same name replaces this one
		}
		if written > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, buf[m.name[0]:m.name[1]]...)
		dst = append(dst, ':')
		dst = append(dst, buf[m.value[0]:m.value[1]]...)
		written++
	}
	return append(dst, '}'), true, nil
}
