package load

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
)

// ServeFlags are the flags a metahooks binary needs for a benchmark besides
// --addr, found from its own `serve -h` usage (older builds lack some, so the
// same benchmark measures them too): where the binary authenticates, a fresh
// random bearer token written to dir/tokens, as Metacontroller sends one;
// where it takes one, a fresh random credentials key in
// dir/credentials-key (the Database hook's); and no separate metrics
// listener (its default port is fixed and other runs may hold it).
// authorization is the Authorization header value for the token, "" where
// the binary takes none.
func ServeFlags(binary, dir string) (args []string, authorization string, err error) {
	usage := serveUsage(binary)
	if bytes.Contains(usage, []byte("-auth-token-file")) {
		token, err := randomSecret(dir, "tokens", base64.RawURLEncoding)
		if err != nil {
			return nil, "", err
		}
		args = append(args, "--auth-token-file", filepath.Join(dir, "tokens"))
		authorization = "Bearer " + token
	}
	if bytes.Contains(usage, []byte("-credentials-key-file")) {
		if _, err := randomSecret(dir, "credentials-key", base64.StdEncoding); err != nil {
			return nil, "", err
		}
		args = append(args, "--credentials-key-file", filepath.Join(dir, "credentials-key"))
	}
	if bytes.Contains(usage, []byte("-metrics-addr")) {
		args = append(args, "--metrics-addr", "")
	}
	return args, authorization, nil
}

// MetricsFlags are the flags that open the metrics listener on addr, to be
// appended after ServeFlags' (the later --metrics-addr wins). With token
// and a binary that takes --metrics-auth-token-file, GET /metrics then asks
// for a fresh random bearer token, written to dir/metrics-tokens;
// authorization is its Authorization header value, "" where none is asked
// for.
func MetricsFlags(binary, dir, addr string, token bool) (args []string, authorization string, err error) {
	args = []string{"--metrics-addr", addr}
	if token && bytes.Contains(serveUsage(binary), []byte("-metrics-auth-token-file")) {
		secret, err := randomSecret(dir, "metrics-tokens", base64.RawURLEncoding)
		if err != nil {
			return nil, "", err
		}
		args = append(args, "--metrics-auth-token-file", filepath.Join(dir, "metrics-tokens"))
		authorization = "Bearer " + secret
	}
	return args, authorization, nil
}

// serveUsage is the binary's `serve -h` output.
func serveUsage(binary string) []byte {
	usage, _ := exec.Command(binary, "serve", "-h").CombinedOutput()
	return usage
}

// randomSecret writes 32 random bytes, encoded, to dir/name (0600) and
// returns them as written.
func randomSecret(dir, name string, encoding *base64.Encoding) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	secret := encoding.EncodeToString(raw)
	return secret, os.WriteFile(filepath.Join(dir, name), []byte(secret+"\n"), 0o600)
}
