package kube

import "testing"

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
