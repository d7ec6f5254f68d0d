package database

import (
	"os"
	"testing"
	"time"

	"metahooks/hooks/composite"
)

// BenchmarkSync is one sync of a running Database whose children are all
// observed (testdata/credentials-observed): decode, build, encode.
func BenchmarkSync(b *testing.B) {
	body, err := os.ReadFile("testdata/credentials-observed/request.json")
	if err != nil {
		b.Fatal(err)
	}
	req, err := composite.DecodeRequest(body)
	if err != nil {
		b.Fatal(err)
	}
	hook, err := Hook([]byte("benchmark-credentials-key-0123456789abcdef"), testAgentImage)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hook(req, now); err != nil {
			b.Fatal(err)
		}
	}
}
