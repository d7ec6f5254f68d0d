package composite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// scanAll reads data as one JSON text with a scanner: a value with white
// space around it and nothing else.
func scanAll(data []byte, checkNames bool) bool {
	s := newScanner(data)
	defer s.release()
	start := s.ws(0)
	end, ok := s.value(start, checkNames)
	return ok && s.ws(end) == len(data)
}

func TestScannerTakesWhatEncodingJSONTakes(t *testing.T) {
	cases := []struct{ reason, text string }{
		{"an empty object", `{}`},
		{"an empty array", ` [ ] `},
		{"nested values of every kind", `{"a":[1,-2.5e+3,0,true,false,null,"x",{"b":{}}],"c":"d"}`},
		{"white space everywhere JSON allows it", "\t{ \"a\" :\n[ 1 ,\r2 ] }\n"},
		{"every escape", `"\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00"`},
		{"a lone surrogate escape", `"\ud800"`},
		{"invalid UTF-8 inside a string", "\"\xff\xfe\""},
		{"DEL and bytes outside ASCII", "\"\x7f\xc3\xa9\""},
		{"a string longer than eight bytes with an escape after them", `"abcdefghijklmnop\nqrstuvwxyz0123456789\"x"`},
		{"numbers", `[0,-0,1,10,1.5,-1.5e10,1E-2,0.0e+0]`},
		{"a bare literal", `null`},
		{"a repeated name (allowed without the check)", `{"a":1,"a":2}`},
		{"unclosed object", `{"a":1`},
		{"unclosed array", `[1,2`},
		{"unclosed string", `"abc`},
		{"unclosed string after eight bytes", `"abcdefghijklmnopq`},
		{"a control character in a string", "\"a\x01b\""},
		{"a newline in a string after eight bytes", "\"abcdefghij\nk\""},
		{"an unknown escape", `"\x41"`},
		{"a short unicode escape", `"\u12"`},
		{"a unicode escape that is not hex", `"\u12g4"`},
		{"a leading zero", `01`},
		{"a minus alone", `-`},
		{"a fraction without digits", `1.`},
		{"an exponent without digits", `1e`},
		{"an exponent sign without digits", `1e+`},
		{"a leading dot", `.5`},
		{"a leading plus", `+1`},
		{"a broken literal", `tru`},
		{"a literal run on", `truex`},
		{"a trailing comma in an array", `[1,]`},
		{"a trailing comma in an object", `{"a":1,}`},
		{"a missing colon", `{"a" 1}`},
		{"a name that is not a string", `{a:1}`},
		{"two values", `1 2`},
		{"a comma alone", `[,]`},
		{"elements without a comma", `[1 2]`},
		{"members without a comma", `{"a":1 "b":2}`},
		{"members without a comma, nested", `{"x":{"a":{} "b":[]}}`},
		{"nothing", ``},
		{"white space only", ` `},
		{"a vertical tab is not white space", "\v1"},
		{"a single quote string", `'a'`},
	}
	for _, tc := range cases {
		want := json.Valid([]byte(tc.text))
		if got := scanAll([]byte(tc.text), false); got != want {
			t.Errorf("%s: scanner took %q: %v, encoding/json: %v", tc.reason, tc.text, got, want)
		}
		// With names checked: the same, but for the repeated name.
		want = want && strictDecoderTakes([]byte(tc.text))
		if got := scanAll([]byte(tc.text), true); got != want {
			t.Errorf("%s: scanner with names checked took %q: %v, want %v", tc.reason, tc.text, got, want)
		}
	}
}

func TestScannerDepth(t *testing.T) {
	for _, depth := range []int{maxScanDepth, maxScanDepth + 1} {
		for _, open := range []string{`[`, `{"a":`} {
			closing := `]`
			if open != `[` {
				closing = `}`
			}
			text := []byte(strings.Repeat(open, depth) + `1` + strings.Repeat(closing, depth))
			if got, want := scanAll(text, false), json.Valid(text); got != want {
				t.Errorf("%d levels of %s: scanner %v, encoding/json %v", depth, open, got, want)
			}
		}
	}
}

func TestScannerRepeatedNames(t *testing.T) {
	many := func(n int, last string) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, `"name%d":%d,`, i, i)
		}
		b.WriteString(`"` + last + `":0}`)
		return b.String()
	}
	cases := []struct {
		reason, text string
		want         bool
	}{
		{"distinct names", `{"a":1,"b":{"a":2},"c":[{"a":1},{"a":1}]}`, true},
		{"a repeated name", `{"a":1,"a":2}`, false},
		{"names differ only in case", `{"a":1,"A":2}`, true},
		{"a name repeated in a nested object", `{"a":{"b":1,"b":2}}`, false},
		{"a name repeated in an object in an array", `[{"b":1},{"b":1,"b":2}]`, false},
		{"a name repeated through an escape", `{"ab":1,"a\u0062":2}`, false},
		{"escaped names that differ", `{"a\u0062":1,"a\u0063":2}`, true},
		{"invalid UTF-8 names that encoding/json unquotes alike", "{\"\xff\":1,\"\xfe\":2}", false},
		{"the same name in sibling objects", `{"x":{"a":1},"y":{"a":1}}`, true},
		{"a name repeated after the object nested between", `{"a":{"a":{"a":1}},"a":2}`, false},
		{"many distinct names", many(100, "other"), true},
		{"a name repeated among many", many(100, "name7"), false},
		{"a name repeated just past the linear search", many(linearNames, "name0"), false},
		{"a name repeated just before the map", many(linearNames-1, "name3"), false},
	}
	for _, tc := range cases {
		if got := scanAll([]byte(tc.text), true); got != tc.want {
			t.Errorf("%s: scanner with names checked took %s: %v, want %v", tc.reason, tc.text, got, tc.want)
		}
		if !scanAll([]byte(tc.text), false) {
			t.Errorf("%s: scanner without the check refused %s", tc.reason, tc.text)
		}
	}
}

// strictDecoderTakes reports whether jsontext, refusing repeated names, takes
// text as one JSON value (invalid UTF-8 allowed, as the decoder allows it).
func strictDecoderTakes(text []byte) bool {
	dec := jsontext.NewDecoder(bytes.NewReader(text), jsontext.AllowDuplicateNames(false), jsontext.AllowInvalidUTF8(true))
	if _, err := dec.ReadValue(); err != nil {
		return false
	}
	_, err := dec.ReadToken()
	return err != nil && err.Error() == "EOF"
}

// FuzzScanner: the scanner takes exactly what encoding/json takes; with
// names checked, it takes nothing that jsontext refusing repeated names
// refuses, and, where every name is plain ASCII, everything it takes.
func FuzzScanner(f *testing.F) {
	for _, body := range requestFiles(f) {
		f.Add(body)
	}
	for _, text := range []string{`{"a":1,"a":2}`, `{"ab":1,"a\u0062":2}`, "\"a\x01\"", `[1e+5,-0.5]`, `{"abcdefghij":"\u00e9\n"}`} {
		f.Add([]byte(text))
	}
	f.Fuzz(func(t *testing.T, text []byte) {
		if got, want := scanAll(text, false), json.Valid(text); got != want {
			t.Fatalf("scanner took %q: %v, encoding/json: %v", text, got, want)
		}
		checked := scanAll(text, true)
		strict := strictDecoderTakes(text)
		if checked && !strict {
			t.Fatalf("scanner with names checked took %q, jsontext refuses it", text)
		}
		plain := !bytes.ContainsAny(text, "\\") && bytes.IndexFunc(text, func(r rune) bool { return r >= 0x80 }) < 0
		if plain && strict && !checked {
			t.Fatalf("scanner with names checked refused %q, jsontext takes it", text)
		}
	})
}

// TestSpecialBytes holds specialBytes to a byte-at-a-time reading: its
// lowest flagged byte is the first byte a JSON string cannot hold as it is
// (with html, the first encoding/json's HTML escaping escapes too), on every
// word of one special byte among ordinary ones, two special bytes, and
// random words.
func TestSpecialBytes(t *testing.T) {
	special := func(b byte, html bool) bool {
		return b == '"' || b == '\\' || b < 0x20 || b >= 0x80 || (html && (b == '<' || b == '>' || b == '&'))
	}
	first := func(x uint64, html bool) int { // 8: none
		for k := range 8 {
			if special(byte(x>>(8*k)), html) {
				return k
			}
		}
		return 8
	}
	check := func(x uint64) {
		t.Helper()
		for _, html := range []bool{false, true} {
			got := bits.TrailingZeros64(specialBytes(x, html)) / 8
			if want := first(x, html); got != want {
				t.Fatalf("specialBytes(%#016x, html %v): first flagged byte %d, want %d", x, html, got, want)
			}
		}
	}
	const ordinary = 0x6161616161616161 // "aaaaaaaa"
	for k := range 8 {
		for b := range 256 {
			x := ordinary&^(0xff<<(8*k)) | uint64(b)<<(8*k)
			check(x)
			for j := k + 1; j < 8; j++ { // a second byte above: a borrow must not move the first
				for _, c := range []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', '#', '\\', ']', 0x7f, 0x80, 0xff} {
					check(x&^(0xff<<(8*j)) | uint64(c)<<(8*j))
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1 << 20 {
		check(r.Uint64())
		// and words of ASCII near the special bytes, where borrows are
		x := r.Uint64() & 0x3f3f3f3f3f3f3f3f
		check(x + 0x1e1e1e1e1e1e1e1e)
	}
}

// BenchmarkScanner reads a whole request, compact as Metacontroller sends
// it, once per operation: with the scanner, names checked or not, and with
// jsontext (the reading it replaced), names checked or not.
func BenchmarkScanner(b *testing.B) {
	for _, file := range []string{"../../server/testdata/metacontroller/sync-03-children-with-status.json", "../../examples/requests/database-credentials-observed.json"} {
		raw, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil {
			b.Fatal(err)
		}
		body := compact.Bytes()
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		for _, checkNames := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/scanner/names-checked=%v", name, checkNames), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					if !scanAll(body, checkNames) {
						b.Fatal("scanner refused the request")
					}
				}
			})
			b.Run(fmt.Sprintf("%s/jsontext/names-checked=%v", name, checkNames), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				dec := jsontext.NewDecoder(bytes.NewReader(nil))
				for b.Loop() {
					dec.Reset(bytes.NewReader(body), jsontext.AllowDuplicateNames(!checkNames), jsontext.AllowInvalidUTF8(true))
					if _, err := dec.ReadValue(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
