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
// random bearer token written to dir/tokens, as Metacontroller sends one, and
// no separate metrics listener (its default port is fixed and other runs may
// hold it). authorization is the Authorization header value for the token,
// "" where the binary takes none.
func ServeFlags(binary, dir string) (args []string, authorization string, err error) {
	usage, _ := exec.Command(binary, "serve", "-h").CombinedOutput()
	if bytes.Contains(usage, []byte("-auth-token-file")) {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return nil, "", err
		}
		token := base64.RawURLEncoding.EncodeToString(raw)
		tokenFile := filepath.Join(dir, "tokens")
		if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
			return nil, "", err
		}
		args = append(args, "--auth-token-file", tokenFile)
		authorization = "Bearer " + token
	}
	if bytes.Contains(usage, []byte("-metrics-addr")) {
		args = append(args, "--metrics-addr", "")
	}
	return args, authorization, nil
}
