package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"metahooks/hooks/composite"
)

// costShape builds a request of about n repeated values of one costly
// shape (issue 30: 3 bytes of `{}` become a 408-byte corev1.Container).
type costShape struct {
	reason, hook string
	build        func(t *testing.T, n int) []byte
}

// leastAnswered are the shapes of which a real request may hold many
// values: as many must be answered. Metacontroller sends a Database at
// most 9 instance pods (spec.instances <= 9) and the pods of its backup
// Jobs, each tried 3 times (backoffLimit 2): the CronJob's 3 successful
// and 3 failed kept, the on-demand Job and the final one, 24. Real pods are larger than these tiny ones (the API server's
// defaults, status, managedFields), and a larger pod brings more budget
// than it costs.
var leastAnswered = map[string]int{tinyRelatedPods: 33}

const tinyRelatedPods = "tiny related pods, each a 1240-byte corev1.Pod"

func costShapes() []costShape {
	myapp := "testdata/metacontroller/sync-03-children-with-status.json"
	db := "../hooks/database/testdata/ha-streaming/request.json"
	statefulSet := func(req map[string]any) map[string]any {
		for _, sts := range req["children"].(map[string]any)["StatefulSet.apps/v1"].(map[string]any) {
			return sts.(map[string]any)
		}
		panic("no StatefulSet in the request")
	}
	podSpec := func(req map[string]any) map[string]any {
		return statefulSet(req)["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	}
	empties := func(n int) []any {
		list := make([]any, n)
		for i := range list {
			list[i] = map[string]any{}
		}
		return list
	}
	strs := func(n int) map[string]any {
		m := make(map[string]any, n)
		for i := range n {
			m[fmt.Sprintf("k%07d", i)] = ""
		}
		return m
	}
	from := func(path string, mutate func(req map[string]any, n int)) func(t *testing.T, n int) []byte {
		return func(t *testing.T, n int) []byte {
			var req map[string]any
			if err := json.Unmarshal(readFile(t, path), &req); err != nil {
				t.Fatal(err)
			}
			mutate(req, n)
			body, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			return body
		}
	}
	return []costShape{
		{"labels on the parent: one map entry each", "myapp", from(myapp, func(req map[string]any, n int) {
			req["parent"].(map[string]any)["metadata"].(map[string]any)["labels"] = strs(n)
		})},
		{"annotations on the parent of a Database", "database", from(db, func(req map[string]any, n int) {
			req["parent"].(map[string]any)["metadata"].(map[string]any)["annotations"] = strs(n)
		})},
		{"empty containers in the observed StatefulSet: 408 bytes each", "myapp", from(myapp, func(req map[string]any, n int) {
			podSpec(req)["containers"] = empties(n)
		})},
		{"named containers in the observed StatefulSet", "myapp", from(myapp, func(req map[string]any, n int) {
			list := make([]any, n)
			for i := range list {
				list[i] = map[string]any{"name": fmt.Sprintf("c%06d", i), "image": "i"}
			}
			podSpec(req)["containers"] = list
		})},
		{"one-label selectors in the observed StatefulSet: a map's smallest table each", "myapp", from(myapp, func(req map[string]any, n int) {
			list := make([]any, n)
			for i := range list {
				list[i] = map[string]any{"labelSelector": map[string]any{"matchLabels": map[string]any{"a": ""}}}
			}
			podSpec(req)["topologySpreadConstraints"] = list
		})},
		{"empty conditions in the observed StatefulSet's status", "database", from(db, func(req map[string]any, n int) {
			statefulSet(req)["status"].(map[string]any)["conditions"] = empties(n)
		})},
		{tinyRelatedPods, "database", from(db, func(req map[string]any, n int) {
			pods := make(map[string]any, n)
			for i := range n {
				name := fmt.Sprintf("p%07d", i)
				pods["shop/"+name] = map[string]any{"metadata": map[string]any{"name": name, "namespace": "shop"}}
			}
			req["related"] = map[string]any{"Pod.v1": pods}
		})},
		{"empty containers behind 6 MiB of white space (the budget counts none of it)", "myapp", func(t *testing.T, n int) []byte {
			body := from(myapp, func(req map[string]any, n int) { podSpec(req)["containers"] = empties(n) })(t, n)
			return append([]byte("{"+strings.Repeat(" ", 6<<20)), body[1:]...)
		}},
		{"escaped names in the parent's labels, unquoted by encoding/json", "myapp", func(t *testing.T, n int) []byte {
			body := from(myapp, func(req map[string]any, n int) {
				req["parent"].(map[string]any)["metadata"].(map[string]any)["labels"] = map[string]any{"placeholder": ""}
			})(t, n)
			var labels strings.Builder
			for i := range n {
				fmt.Fprintf(&labels, `"\u0061%07d":"",`, i)
			}
			return bytes.Replace(body, []byte(`"placeholder":""`), []byte(labels.String()+`"placeholder":""`), 1)
		}},
		{"empty containers with a type error: the slow decoder and its error path", "myapp", from(myapp, func(req map[string]any, n int) {
			podSpec(req)["containers"] = empties(n)
			statefulSet(req)["status"] = "not an object"
		})},
		{"empty containers in a Database's observed StatefulSet: the hook hashes its own template, never the observed one", "database", from(db, func(req map[string]any, n int) {
			podSpec(req)["containers"] = empties(n)
		})},
		{"empty containers in the observed StatefulSet, then one the scan gives up on (labels of the wrong type): the slow path takes on what the scan decoded", "database", from(db, func(req map[string]any, n int) {
			podSpec(req)["containers"] = empties(n)
			req["children"].(map[string]any)["StatefulSet.apps/v1"].(map[string]any)["zz"] = map[string]any{"metadata": map[string]any{"name": "zz", "labels": 1}}
		})},
		{"labels on a Database parent whose spec then has a key given twice: the slow decoder, its duplicate check, and the scan's decode of the parent it gave up on (review of issue 30: 1.55x the bound)", "database", func(t *testing.T, n int) []byte {
			body := from(db, func(req map[string]any, n int) {
				req["parent"].(map[string]any)["metadata"].(map[string]any)["labels"] = strs(n)
				req["parent"].(map[string]any)["spec"].(map[string]any)["placeholder"] = ""
			})(t, n)
			return bytes.Replace(body, []byte(`"placeholder":""`), []byte(`"zz":1,"zz":2`), 1)
		}},
		{"labels on a Database parent whose spec then has a value of the wrong type: the slow decoder and its error path (review: 2.25x)", "database", from(db, func(req map[string]any, n int) {
			req["parent"].(map[string]any)["metadata"].(map[string]any)["labels"] = strs(n)
			req["parent"].(map[string]any)["spec"].(map[string]any)["instances"] = "x"
		})},
		{"the same with 50 bytes of padding per label at the top, up to 8 MiB (review: 123 MB, 2.09x)", "database", func(t *testing.T, n int) []byte {
			body := from(db, func(req map[string]any, n int) {
				req["parent"].(map[string]any)["metadata"].(map[string]any)["labels"] = strs(n)
				req["parent"].(map[string]any)["spec"].(map[string]any)["placeholder"] = ""
				req["pad"] = strings.Repeat("x", 50*n)
			})(t, n)
			return bytes.Replace(body, []byte(`"placeholder":""`), []byte(`"zz":1,"zz":2`), 1)
		}},
		{"labels in the observed StatefulSet's selector, which the answer would copy into six places (400 past 16)", "database", from(db, func(req map[string]any, n int) {
			statefulSet(req)["spec"].(map[string]any)["selector"] = map[string]any{"matchLabels": strs(n)}
		})},
		{"nested arrays in a member no type has", "database", func(t *testing.T, n int) []byte {
			var b strings.Builder
			b.WriteString(`{"parent":{"apiVersion":"example.com/v1","kind":"Database","metadata":{"name":"a","namespace":"b"},"x":[`)
			for k := range n / 1000 {
				if k > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strings.Repeat("[", 999) + strings.Repeat("]", 999))
			}
			b.WriteString(`]},"children":{}}`)
			return []byte(b.String())
		}},
	}
}

// decodeBound is what a request of n body bytes may allocate: its decode
// budget (hooks/composite: 4 x the body + 1 MiB) and three copies of the
// body (read, decoded strings, answer). The memory budget's share of the
// request counts at least that (TestMemoryShareCoversDecodeBound).
func decodeBound(n int) uint64 {
	return uint64(composite.DecodeBudgetPerByte*n+composite.DecodeBudgetSlack) + bodyCopies*uint64(n)
}

// TestMemoryShareCoversDecodeBound: the memory a request's in-flight share
// stands for is at least what it may allocate, from a tiny body to the
// largest.
func TestMemoryShareCoversDecodeBound(t *testing.T) {
	b := newInFlightBudget(1, 8<<20, nil)
	for _, n := range []int{0, 100, 20 << 10, 256 << 10, 1 << 20, 8 << 20} {
		if memory := uint64(decodeOverhead * b.share(int64(n))); memory < decodeBound(n) {
			t.Errorf("a %d-byte body's share stands for %d bytes of memory, less than the %d it may allocate", n, memory, decodeBound(n))
		}
	}
}

// postCounting answers body on the hook's sync path, with the bytes allocated
// meanwhile.
func postCounting(t *testing.T, router http.Handler, hook string, body []byte) (int, string, uint64) {
	t.Helper()
	// Two collections empty every sync.Pool (the first moves a pool's
	// objects to its victim cache, the second drops them): each request
	// then allocates what it needs afresh, and the same request the same
	// bytes. With one, a request found the buffers of the one before it
	// (json.Marshal's, 0.7 MB for a Database's template hash) or not,
	// by the collector's timing: 0.48 or 1.51 MB for the same body.
	runtime.GC()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	req := httptest.NewRequest(http.MethodPost, "/hooks/"+hook+"/sync", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	router.ServeHTTP(rec, req)
	runtime.ReadMemStats(&after)
	return rec.Code, rec.Body.String(), after.TotalAlloc - before.TotalAlloc
}

// TestDecodeCostBoundsAllocation: for each costly shape, the largest
// request the hook still answers (found by bisection) allocates no more
// than its decode budget (4 x the body + 1 MiB), three copies of the
// body (read, decoded strings, answer) and what the hook allocates for the
// same request with one value; past it, the request is refused
// with 413 naming the field, within the same bound. Before
// the budget, 8 MiB of empty containers took 6.5 GB, of empty conditions
// 1.2 GB, 600,000 labels 151 MB.
func TestDecodeCostBoundsAllocation(t *testing.T) {
	const maxBody = 8 << 20
	router, _ := newTestRouter(t, maxBody)
	for _, shape := range costShapes() {
		t.Run(shape.reason, func(t *testing.T) {
			// The largest n answered, and the smallest refused.
			lo, hi := 1, 1
			for {
				body := shape.build(t, hi)
				if len(body) > maxBody {
					break
				}
				if code, _, _ := postCounting(t, router, shape.hook, body); code == http.StatusRequestEntityTooLarge {
					break
				}
				lo, hi = hi, hi*2
			}
			for hi-lo > max(lo/64, 1) {
				mid := (lo + hi) / 2
				body := shape.build(t, mid)
				if code, _, _ := postCounting(t, router, shape.hook, body); code == http.StatusRequestEntityTooLarge || len(body) > maxBody {
					hi = mid
				} else {
					lo = mid
				}
			}
			// What the hook allocates beside decoding (its answer, a
			// Database's scripts): that of the request with one value.
			base := ^uint64(0)
			for range 3 {
				_, _, allocated := postCounting(t, router, shape.hook, shape.build(t, 1))
				base = min(base, allocated)
			}
			if least := leastAnswered[shape.reason]; lo < least {
				t.Errorf("only %d values answered; a real request may hold %d", lo, least)
			}
			body := shape.build(t, lo)
			code, answer, allocated := postCounting(t, router, shape.hook, body)
			limit := decodeBound(len(body)) + base
			t.Logf("answered: %d values, body %d bytes, code %d, allocated %d bytes (%.1fx the body; bound %d, of which %d the hook's own with one value)", lo, len(body), code, allocated, float64(allocated)/float64(len(body)), limit, base)
			if code == http.StatusRequestEntityTooLarge {
				t.Fatalf("the smallest shape was refused: %.300s", answer)
			}
			if code >= 500 {
				t.Errorf("answered %d: %.300s", code, answer)
			}
			if allocated > limit {
				t.Errorf("a request the hook answered (%d) allocated %d bytes, more than its bound %d", code, allocated, limit)
			}
			body = shape.build(t, hi)
			if len(body) > maxBody {
				return // the body limit came first
			}
			code, answer, allocated = postCounting(t, router, shape.hook, body)
			t.Logf("refused: %d values, body %d bytes, code %d, allocated %d bytes (%.1fx): %.200s", hi, len(body), code, allocated, float64(allocated)/float64(len(body)), answer)
			if code != http.StatusRequestEntityTooLarge || !strings.Contains(answer, "decoding would take more than") {
				t.Errorf("past the budget: %d %.300s, want 413 naming the field", code, answer)
			}
			if !strings.HasPrefix(answer, `{"error":"parent`) && !strings.HasPrefix(answer, `{"error":"children[`) && !strings.HasPrefix(answer, `{"error":"related[`) {
				t.Errorf("past the budget: %.300s, want the field named", answer)
			}
			// What was decoded before the budget ran out counts too.
			if bound := decodeBound(len(body)) + base; allocated > bound {
				t.Errorf("the refusal allocated %d bytes, more than its bound %d", allocated, bound)
			}
		})
	}
}
