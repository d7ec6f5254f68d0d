package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// buildIdentity names this build in the ETags: the version it was stamped
// with and the start of the SHA-256 of its own executable. Two builds that
// differ in anything never share an ETag, also when both were stamped "dev"
// (the Dockerfile's default) or from the same dirty checkout, so a new build
// never answers 412 for an answer the old one gave. The replicas of one
// image run the same bytes and so agree.
func buildIdentity(version string) (string, error) {
	path, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the executable: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("cannot read the executable: %w", err)
	}
	defer f.Close()
	digest := sha256.New()
	if _, err := io.Copy(digest, f); err != nil {
		return "", fmt.Errorf("cannot read the executable: %w", err)
	}
	return version + "+" + hex.EncodeToString(digest.Sum(nil)[:8]), nil
}
