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

func TestHashJSON(t *testing.T) {
	type tpl struct {
		Image  string            `json:"image"`
		Labels map[string]string `json:"labels"`
	}
	a := HashJSON(tpl{Image: "postgres:17", Labels: map[string]string{"x": "1", "y": "2"}})
	if b := HashJSON(tpl{Image: "postgres:17", Labels: map[string]string{"y": "2", "x": "1"}}); a != b {
		t.Errorf("HashJSON depends on map order: %s != %s", a, b)
	}
	if c := HashJSON(tpl{Image: "postgres:17.2", Labels: map[string]string{"x": "1", "y": "2"}}); c == a {
		t.Errorf("HashJSON gave the same hash for different values")
	}
	if d := HashStrings(map[string]string{"a": "1"}); d != HashJSON(map[string]string{"a": "1"}) {
		t.Errorf("HashStrings must be HashJSON of the map (config hashes on pod templates must not change)")
	}
}
