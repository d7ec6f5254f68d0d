package composite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// referenceClean is the encoder cleanJSON replaced, kept as its oracle:
// decode into map[string]any with json.Number, drop nulls and empty objects
// depth first (emptyDir keeps its {}; array items stay in place), delete the
// top-level status, marshal again (encoding/json sorts map keys).
func referenceClean(raw []byte, dropStatus bool) ([]byte, error) {
	decoder := json.NewDecoder(bytes.NewReader(raw))
	decoder.UseNumber()
	var value any
	if err := decoder.Decode(&value); err != nil {
		return nil, err
	}
	if m, ok := value.(map[string]any); ok && dropStatus {
		delete(m, "status")
	}
	pruned, _ := referencePrune(value)
	if pruned == nil {
		pruned = map[string]any{}
	}
	return json.Marshal(pruned)
}

func referencePrune(value any) (any, bool) {
	switch v := value.(type) {
	case nil:
		return nil, false
	case map[string]any:
		for key, field := range v {
			kept, ok := referencePrune(field)
			if !ok && !(keepWhenEmpty[key] && field != nil) {
				delete(v, key)
				continue
			}
			if ok {
				v[key] = kept
			}
		}
		return v, len(v) > 0
	case []any:
		for i, item := range v {
			kept, ok := referencePrune(item)
			if !ok {
				if _, isMap := item.(map[string]any); isMap {
					kept = map[string]any{}
				} else {
					kept = item
				}
			}
			v[i] = kept
		}
		return v, true
	default:
		return v, true
	}
}

func TestCleanJSON(t *testing.T) {
	cases := map[string]struct {
		reason, in string
		dropStatus bool
		want       string
	}{
		"SortsEveryObject": {
			reason: "members sorted by name at every depth, whatever order the marshaller wrote them in",
			in:     `{"b":1,"a":{"z":true,"y":"x"}}`, want: `{"a":{"y":"x","z":true},"b":1}`,
		},
		"DropsNullsAndEmptyObjects": {
			reason: "a null, an empty object, and an object that is empty once its nulls go, all vanish",
			in:     `{"a":null,"b":{},"c":{"d":null,"e":{}},"f":1}`, want: `{"f":1}`,
		},
		"KeepsEmptyDir": {
			reason: "emptyDir: {} asks for a volume; emptyDir: null does not",
			in:     `{"volumes":[{"emptyDir":{"sizeLimit":null},"name":"a"},{"emptyDir":null,"name":"b"}]}`,
			want:   `{"volumes":[{"emptyDir":{},"name":"a"},{"name":"b"}]}`,
		},
		"ArrayItemsStayInPlace": {
			reason: "an array item is never dropped: an empty object item is {}, a null item stays null; empty arrays and strings stay",
			in:     `{"a":[{"x":null},null,"",[]],"b":[],"c":""}`, want: `{"a":[{},null,"",[]],"b":[],"c":""}`,
		},
		"DropsTopLevelStatusOnly": {
			reason: "status of the object goes, a status field deeper in (a condition's) stays",
			in:     `{"status":{"replicas":3},"spec":{"status":"True"}}`, dropStatus: true, want: `{"spec":{"status":"True"}}`,
		},
		"KeepsStatusInClean": {
			reason: "Clean (a parent's status) keeps a member named status",
			in:     `{"status":"ok"}`, want: `{"status":"ok"}`,
		},
		"NumbersAndStringsVerbatim": {
			reason: "numbers and escapes are copied as written, so the output escapes as encoding/json does",
			in:     `{"n":1.50e3,"big":12345678901234567890,"s":"\u003cb\u003e \"q\" \u2028"}`,
			want:   `{"big":12345678901234567890,"n":1.50e3,"s":"\u003cb\u003e \"q\" \u2028"}`,
		},
		"EscapedNamesSortUnescaped": {
			reason: "a name is sorted by its text, not by its escaped bytes (\\u0061 is a)",
			in:     `{"b":1,"\u0061c":2,"aa":3}`, want: `{"aa":3,"\u0061c":2,"b":1}`,
		},
		"EverythingEmpty": {
			reason: "a document that cleans to nothing is {}",
			in:     `{"a":{"b":null}}`, want: `{}`,
		},
		"TopLevelNull": {
			reason: "null alone is {} too",
			in:     `null`, want: `{}`,
		},
		"RepeatedNameLastWins": {
			reason: "a repeated name keeps the last value, as decoding into a map does",
			in:     `{"a":1,"a":2}`, want: `{"a":2}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := cleanJSON(nil, []byte(tc.in), tc.dropStatus)
			if err != nil {
				t.Fatalf("%s\ncleanJSON(%s): %v", tc.reason, tc.in, err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("%s\ncleanJSON(%s): -want +got:\n%s", tc.reason, tc.in, diff)
			}
		})
	}
}

func TestCleanJSONRejectsMalformed(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":}`, `[1,]`, `{"a":1}{}`, `{"a":1} x`, `nul`} {
		if got, err := cleanJSON([]byte("keep"), []byte(in), false); err == nil || string(got) != "keep" {
			t.Errorf("cleanJSON(%q) = %q, %v; want an error and dst untouched", in, got, err)
		}
	}
}

// TestCleanJSONMatchesReference: on random documents (nulls, empty objects,
// emptyDir, status, escapes, numbers, nesting) cleanJSON gives the bytes the
// old decode-prune-marshal encoder gave. Inputs come from encoding/json, as
// in EncodeChild, so their escaping is encoding/json's.
func TestCleanJSONMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range 3000 {
		raw := marshalShuffled(rng, randomValue(rng, 0))
		raw = bytes.ReplaceAll(raw, []byte(`"NUM"`), []byte(`1.5e3`))
		for _, dropStatus := range []bool{false, true} {
			want, err := referenceClean(raw, dropStatus)
			if err != nil {
				t.Fatal(err)
			}
			got, err := cleanJSON(nil, raw, dropStatus)
			if err != nil {
				t.Fatalf("document %d: cleanJSON(%s): %v", i, raw, err)
			}
			if !bytes.Equal(want, got) {
				t.Fatalf("document %d, dropStatus %v: cleanJSON(%s)\n got %s\nwant %s", i, dropStatus, raw, got, want)
			}
		}
	}
}

var randomNames = []string{"status", "emptyDir", "a", "b", "spec", "metadata", "<x>", "é", "a&b", "z\u2028", "Z", ""}

func randomValue(rng *rand.Rand, depth int) any {
	choice := rng.IntN(10)
	if depth > 4 && choice < 6 {
		choice += 4
	}
	switch choice {
	case 0, 1, 2:
		m := map[string]any{}
		for range rng.IntN(5) {
			m[randomNames[rng.IntN(len(randomNames))]+strings.Repeat("k", rng.IntN(2))] = randomValue(rng, depth+1)
		}
		return m
	case 3, 4:
		a := make([]any, rng.IntN(4))
		for i := range a {
			a[i] = randomValue(rng, depth+1)
		}
		return a
	case 5:
		return nil
	case 6:
		return randomNames[rng.IntN(len(randomNames))]
	case 7:
		return rng.IntN(3) == 0
	case 8:
		return "NUM" // replaced by a number literal encoding/json would not write
	default:
		return fmt.Sprint(rng.IntN(100))
	}
}

// marshalShuffled writes v as encoding/json would (its escaping), but with
// object members in a random order, as a struct's marshalled fields are.
func marshalShuffled(rng *rand.Rand, v any) []byte {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		var b bytes.Buffer
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			name, _ := json.Marshal(k)
			b.Write(name)
			b.WriteByte(':')
			b.Write(marshalShuffled(rng, v[k]))
		}
		b.WriteByte('}')
		return b.Bytes()
	case []any:
		var b bytes.Buffer
		b.WriteByte('[')
		for i, item := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(marshalShuffled(rng, item))
		}
		b.WriteByte(']')
		return b.Bytes()
	default:
		raw, _ := json.Marshal(v)
		return raw
	}
}

// FuzzCleanJSON: invalid JSON fails, valid JSON as it came does not; any
// valid document without repeated
// names, written as encoding/json escapes and with members shuffled, cleans
// to what the reference gives.
func FuzzCleanJSON(f *testing.F) {
	for _, seed := range []string{`{"a":null,"b":{"c":{}}}`, `[{"emptyDir":{}},null]`, `{"status":1,"x":"<"}`, `{"b":1.0e1,"a":[{}]}`, "{\"b\\u0061\xff\":1}"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			if _, err := cleanJSON(nil, raw, true); err == nil {
				t.Fatalf("cleanJSON accepted invalid JSON %q", raw)
			}
			return
		}
		if _, err := cleanJSON(nil, raw, true); err != nil {
			t.Fatalf("cleanJSON(%q), valid JSON as it came: %v", raw, err) // invalid UTF-8 and escapes included
		}
		if hasRepeatedNames(raw) {
			return
		}
		decoder := json.NewDecoder(bytes.NewReader(raw))
		decoder.UseNumber()
		var v any
		if err := decoder.Decode(&v); err != nil {
			return
		}
		in := marshalShuffled(rand.New(rand.NewPCG(1, uint64(len(raw)))), v)
		want, err := referenceClean(in, true)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cleanJSON(nil, in, true)
		if err != nil {
			t.Fatalf("cleanJSON(%s): %v", in, err)
		}
		if !bytes.Equal(want, got) {
			t.Fatalf("cleanJSON(%s)\n got %s\nwant %s", in, got, want)
		}
	})
}

// hasRepeatedNames is true when some object in raw repeats a name; decoding
// into a map keeps only one of them.
func hasRepeatedNames(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type level struct {
		names      map[string]bool // nil for an array
		expectName bool
	}
	var stack []level
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:top]
			if top > 0 && stack[top-1].names != nil {
				stack[top-1].expectName = true
			}
			continue
		}
		if top >= 0 && stack[top].names != nil && stack[top].expectName {
			name := tok.(string)
			if stack[top].names[name] {
				return true
			}
			stack[top].names[name] = true
			stack[top].expectName = false
			continue
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' {
				stack = append(stack, level{names: map[string]bool{}, expectName: true})
			} else {
				stack = append(stack, level{})
			}
			continue
		}
		if top >= 0 && stack[top].names != nil {
			stack[top].expectName = true
		}
	}
}

// TestCleanJSONNamesWithInvalidUTF8: a name holding an escape and a byte
// that is not UTF-8 is no error (it was a 500), and names are sorted and
// deduplicated as encoding/json reads them, invalid bytes as U+FFFD,
// escaped or not; names and values are still copied byte for byte.
func TestCleanJSONNamesWithInvalidUTF8(t *testing.T) {
	cases := []struct{ reason, in, want string }{
		{"an escape and an invalid byte in one name", "{\"b\\u0061\xff\":1}", "{\"b\\u0061\xff\":1}"},
		{"the same name escaped and not: the last one wins, as a map has it", "{\"z\":1,\"\\u0061\xff\":2,\"a\xff\":3}", "{\"a\xff\":3,\"z\":1}"},
		{"an invalid byte sorts as U+FFFD, before U+FFFE", "{\"\uFFFE\":2,\"\xff\":1}", "{\"\xff\":1,\"\uFFFE\":2}"},
	}
	for _, tc := range cases {
		got, err := cleanJSON(nil, []byte(tc.in), false)
		if err != nil {
			t.Errorf("%s: cleanJSON(%q): %v", tc.reason, tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, string(got)); diff != "" {
			t.Errorf("%s: cleanJSON(%q) -want +got:\n%s", tc.reason, tc.in, diff)
		}
	}
}
