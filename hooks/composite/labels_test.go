package composite

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLabels(t *testing.T) {
	want := map[string]string{
		"app.kubernetes.io/name":       "myapp",
		"app.kubernetes.io/instance":   "demo",
		"app.kubernetes.io/managed-by": "metahooks",
	}
	if diff := cmp.Diff(want, Labels("myapp", "demo")); diff != "" {
		t.Errorf("Labels: -want +got:\n%s", diff)
	}
	selector := SelectorLabels("myapp", "demo")
	if _, ok := selector["app.kubernetes.io/managed-by"]; ok || len(selector) != 2 {
		t.Errorf("SelectorLabels = %v, want name and instance only", selector)
	}
}

func TestHashStrings(t *testing.T) {
	a := HashStrings(map[string]string{"a": "1", "b": "2"})
	b := HashStrings(map[string]string{"b": "2", "a": "1"})
	if a != b {
		t.Errorf("HashStrings depends on insertion order: %s != %s", a, b)
	}
	if c := HashStrings(map[string]string{"a": "1", "b": "3"}); c == a {
		t.Errorf("HashStrings gave the same hash for different data: %s", c)
	}
	if len(a) != 64 {
		t.Errorf("HashStrings = %q, want 64 hex characters", a)
	}
}
