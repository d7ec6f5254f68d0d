package load

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeBinary writes a shell script that prints usage for `serve -h`.
func fakeBinary(t *testing.T, usage string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "metahooks")
	script := "#!/bin/sh\ncat <<'USAGE'\n" + usage + "\nUSAGE\nexit 2\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestServeFlags(t *testing.T) {
	cases := map[string]struct {
		reason    string
		usage     string
		wantFlags []string // with the token file shown as TOKENS
		wantAuth  bool
	}{
		"Old": {
			reason: "a build without authentication or a metrics listener takes no extra flags",
			usage:  "  -addr string\n  -max-body-bytes int",
		},
		"Current": {
			reason:    "a build that authenticates gets a token file, a credentials key and no metrics listener",
			usage:     "  -addr string\n  -auth-token-file string\n  -credentials-key-file string\n  -metrics-addr string",
			wantFlags: []string{"--auth-token-file", "TOKENS", "--credentials-key-file", "KEY", "--metrics-addr", ""},
			wantAuth:  true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			args, auth, err := ServeFlags(fakeBinary(t, tc.usage), dir)
			if err != nil {
				t.Fatal(err)
			}
			tokens, key := filepath.Join(dir, "tokens"), filepath.Join(dir, "credentials-key")
			var got []string
			for _, a := range args {
				switch a {
				case tokens:
					a = "TOKENS"
				case key:
					a = "KEY"
				}
				got = append(got, a)
			}
			if diff := cmp.Diff(tc.wantFlags, got); diff != "" {
				t.Errorf("%s: flags -want +got:\n%s", tc.reason, diff)
			}
			if (auth != "") != tc.wantAuth {
				t.Fatalf("%s: authorization %q, want one: %v", tc.reason, auth, tc.wantAuth)
			}
			if !tc.wantAuth {
				return
			}
			raw, err := os.ReadFile(tokens)
			if err != nil {
				t.Fatal(err)
			}
			token := strings.TrimSpace(string(raw))
			if len(token) < 40 || auth != "Bearer "+token {
				t.Errorf("%s: token file %q and header %q do not match, or the token is short", tc.reason, token, auth)
			}
			raw, err = os.ReadFile(key)
			if err != nil {
				t.Fatal(err)
			}
			if decoded, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(raw))); err != nil || len(decoded) != 32 {
				t.Errorf("%s: credentials key %q is not 32 bytes in base64 (%v)", tc.reason, raw, err)
			}
		})
	}
}

func TestMetricsFlags(t *testing.T) {
	cases := map[string]struct {
		reason    string
		usage     string
		token     bool
		wantFlags []string // with the token file shown as TOKENS
	}{
		"Old": {
			reason:    "a build without --metrics-auth-token-file gets the listener only, even when a token is asked for",
			usage:     "  -addr string\n  -metrics-addr string",
			token:     true,
			wantFlags: []string{"--metrics-addr", "127.0.0.1:1"},
		},
		"NoToken": {
			reason:    "without token the listener asks for none",
			usage:     "  -metrics-addr string\n  -metrics-auth-token-file string",
			wantFlags: []string{"--metrics-addr", "127.0.0.1:1"},
		},
		"Token": {
			reason:    "a build that takes a metrics token gets a fresh one",
			usage:     "  -metrics-addr string\n  -metrics-auth-token-file string",
			token:     true,
			wantFlags: []string{"--metrics-addr", "127.0.0.1:1", "--metrics-auth-token-file", "TOKENS"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			args, auth, err := MetricsFlags(fakeBinary(t, tc.usage), dir, "127.0.0.1:1", tc.token)
			if err != nil {
				t.Fatal(err)
			}
			tokens := filepath.Join(dir, "metrics-tokens")
			var got []string
			for _, a := range args {
				if a == tokens {
					a = "TOKENS"
				}
				got = append(got, a)
			}
			if diff := cmp.Diff(tc.wantFlags, got); diff != "" {
				t.Errorf("%s: flags -want +got:\n%s", tc.reason, diff)
			}
			wantAuth := len(tc.wantFlags) > 2
			if (auth != "") != wantAuth {
				t.Fatalf("%s: authorization %q, want one: %v", tc.reason, auth, wantAuth)
			}
			if !wantAuth {
				return
			}
			raw, err := os.ReadFile(tokens)
			if err != nil {
				t.Fatal(err)
			}
			if token := strings.TrimSpace(string(raw)); len(token) < 40 || auth != "Bearer "+token {
				t.Errorf("%s: token file %q and header %q do not match, or the token is short", tc.reason, token, auth)
			}
		})
	}
}
