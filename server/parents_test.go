package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"metahooks/hooks/composite"
	"metahooks/hooks/database"
)

// credentialsSecret is the answer's credentials Secret for a Database whose
// Secret is not observed yet: what the key decides.
func credentialsSecret(t *testing.T, hook composite.SyncFunc, body []byte) []byte {
	t.Helper()
	req, err := composite.DecodeRequest(body)
	if err != nil {
		t.Fatal(err)
	}
	response, err := hook(req, time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for _, child := range response.Children {
		if child.Kind == "Secret" && strings.HasSuffix(child.Name, "-credentials") {
			return child.JSON
		}
	}
	t.Fatal("no credentials Secret in the answer")
	return nil
}

// TestReloadingDatabaseHook: the credentials key is read again when its
// Secret volume changes, so a Database created after the change gets a
// password from the new key; a new key that does not load keeps the one in
// use, and the log names the file and the reason but not the key.
func TestReloadingDatabaseHook(t *testing.T) {
	oldKey := []byte("old-key-0123456789abcdef0123456789abcdef")
	newKey := []byte("new-key-0123456789abcdef0123456789abcdef")
	shortKey := []byte("short-secret-key")
	body := readFile(t, "../examples/requests/database-first-sync.json")
	want := func(key []byte) []byte {
		t.Helper()
		hook, err := database.Hook(key, "")
		if err != nil {
			t.Fatal(err)
		}
		return credentialsSecret(t, hook, body)
	}
	if bytes.Equal(want(oldKey), want(newKey)) {
		t.Fatal("the two keys give the same Secret: the test could not tell them apart")
	}

	volume := newSecretVolume(t, map[string][]byte{"key": oldKey})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &syncBuffer{}
	reloads := newConfigReloads()
	hook, err := reloadingDatabaseHook(ctx, volume.path("key"), "", 20*time.Millisecond, reloads, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if got := credentialsSecret(t, hook.sync, body); !bytes.Equal(got, want(oldKey)) {
		t.Fatalf("at start: the Secret is not the one of the key in the file:\n%s", got)
	}
	if !bytes.Contains(hook.answerInputs(), database.KeyFingerprint(oldKey)) {
		t.Errorf("at start: inputs %q, want the old key's fingerprint", hook.answerInputs())
	}

	volume.update(t, map[string][]byte{"key": newKey})
	eventually(t, "the new key in use", func() bool { return bytes.Equal(credentialsSecret(t, hook.sync, body), want(newKey)) })
	if !bytes.Contains(hook.answerInputs(), database.KeyFingerprint(newKey)) {
		t.Errorf("after the change: inputs %q, want the new key's fingerprint (the ETags must name the key in use)", hook.answerInputs())
	}

	volume.update(t, map[string][]byte{"key": shortKey})
	eventually(t, "the refused key logged", func() bool { return strings.Contains(logs.String(), "cannot reload credentials key") })
	if got := credentialsSecret(t, hook.sync, body); !bytes.Equal(got, want(newKey)) {
		t.Errorf("after a key too short: the Secret changed, want the previous key's:\n%s", got)
	}
	if !bytes.Contains(hook.answerInputs(), database.KeyFingerprint(newKey)) {
		t.Errorf("after a key too short: inputs %q, want the fingerprint of the key still in use", hook.answerInputs())
	}
	if diff := cmp.Diff(reloadFigures{Gauge: 0, Successes: 1, Failures: 1}, figuresOf(reloads, "credentials_key")); diff != "" {
		t.Errorf("after a key too short: reload metrics (-want +got):\n%s", diff)
	}

	// The key deleted: the key in use stays (passwords never change
	// silently), and the failure is counted.
	removeTestFile(t, volume.path("key"))
	eventually(t, "the deleted key counted", func() bool { return figuresOf(reloads, "credentials_key").Failures == 2 })
	if got := credentialsSecret(t, hook.sync, body); !bytes.Equal(got, want(newKey)) {
		t.Errorf("after the key was deleted: the Secret changed, want the previous key's:\n%s", got)
	}
	if diff := cmp.Diff(reloadFigures{Gauge: 0, Successes: 1, Failures: 2}, figuresOf(reloads, "credentials_key")); diff != "" {
		t.Errorf("after the key was deleted: reload metrics (-want +got):\n%s", diff)
	}
	for _, key := range [][]byte{oldKey, newKey, shortKey} {
		if strings.Contains(logs.String(), string(key)) {
			t.Errorf("the log holds a key: %s", logs.String())
		}
	}
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		lines = append(lines, entry)
	}
	if len(lines) < 2 || lines[0]["msg"] != "reloaded credentials key" {
		t.Errorf("log lines %v, want the reload then the refusal", lines)
	}
}

// TestReloadingDatabaseHookWithoutKey: no key file is no watcher, and the
// Database hook answers as database.Unconfigured does.
func TestReloadingDatabaseHookWithoutKey(t *testing.T) {
	hook, err := reloadingDatabaseHook(context.Background(), "", "", time.Hour, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	req, err := composite.DecodeRequest(readFile(t, "../examples/requests/database-first-sync.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(hook.answerInputs()); strings.Contains(got, "credentials-key") {
		t.Errorf("without a key: inputs %q name one", got)
	}
	_, gotErr := hook.sync(req, time.Now())
	_, wantErr := database.Unconfigured(req, time.Now())
	if gotErr == nil || wantErr == nil || gotErr.Error() != wantErr.Error() {
		t.Errorf("without a key: error %v, want database.Unconfigured's %v", gotErr, wantErr)
	}
}
