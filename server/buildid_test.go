package main

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"strings"
	"testing"
)

func TestBuildIdentity(t *testing.T) {
	path, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	want := "v1.2.3+" + hex.EncodeToString(sum[:8])
	got, err := buildIdentity("v1.2.3")
	if err != nil || got != want {
		t.Fatalf("buildIdentity = %q, %v; want %q: the version and the start of the executable's SHA-256", got, err, want)
	}
	if again, _ := buildIdentity("v1.2.3"); again != got {
		t.Errorf("a second call gave %q, want %q: replicas of one image must agree", again, got)
	}
	if dev, _ := buildIdentity("dev"); !strings.HasPrefix(dev, "dev+") || strings.TrimPrefix(dev, "dev+") != strings.TrimPrefix(got, "v1.2.3+") {
		t.Errorf("buildIdentity(dev) = %q; want dev+ and the same digest", dev)
	}
}
