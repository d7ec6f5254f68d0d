package database

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	dbv1 "metahooks/api/v1"
	"metahooks/hooks/composite"
)

func secretData(t *testing.T, resp *composite.Response, name string) map[string][]byte {
	t.Helper()
	secret := responseChild[corev1.Secret](t, resp, "Secret", name)
	if secret == nil {
		t.Fatalf("no Secret %s in the answer", name)
	}
	return secret.Data
}

func syncWithKey(t *testing.T, key []byte, req *composite.Request) *composite.Response {
	t.Helper()
	hook, err := Hook(key, testAgentImage)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hook(req, testNow)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestCredentials(t *testing.T) {
	otherKey := bytes.Repeat([]byte{'z'}, 32)
	first := newRequest(t, newDatabase(), false)

	t.Run("SameKeySamePassword", func(t *testing.T) {
		// Two replicas of the service, each with its own Hook instance.
		a := secretData(t, syncWithKey(t, bytes.Clone(testKey), first), "orders-credentials")
		b := secretData(t, syncWithKey(t, bytes.Clone(testKey), first), "orders-credentials")
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("two hooks with the same key must derive the same credentials: -a +b:\n%s", diff)
		}
		if len(a["password"]) != 43 {
			t.Errorf("password must be 43 base64url characters (256 bits), got %d", len(a["password"]))
		}
	})

	t.Run("DifferentKeyDifferentPassword", func(t *testing.T) {
		a := secretData(t, syncWithKey(t, testKey, first), "orders-credentials")
		b := secretData(t, syncWithKey(t, otherKey, first), "orders-credentials")
		if bytes.Equal(a["password"], b["password"]) {
			t.Error("a different key must derive a different password")
		}
	})

	t.Run("DifferentDatabaseDifferentPassword", func(t *testing.T) {
		cases := map[string]func(*dbv1.Database){
			"OtherName":      func(db *dbv1.Database) { db.Name = "orders2" },
			"OtherNamespace": func(db *dbv1.Database) { db.Namespace = "shop2" },
			"Concatenation":  func(db *dbv1.Database) { db.Namespace = "sho"; db.Name = "porders" },
		}
		base := secretData(t, syncWithKey(t, testKey, first), "orders-credentials")
		for name, mutate := range cases {
			db := newDatabase(mutate)
			got := secretData(t, syncWithKey(t, testKey, newRequest(t, db, false)), db.Name+"-credentials")
			if bytes.Equal(base["password"], got["password"]) {
				t.Errorf("%s: %s/%s must not share the password of shop/orders", name, db.Namespace, db.Name)
			}
		}
	})

	t.Run("SameNameAfterRecreateNewPasswords", func(t *testing.T) {
		// A Database deleted and created again under its name gets a new
		// UID: whoever read the earlier one's Secrets must not know the new
		// ones. (Its retained data still opens: TestScriptsRecreatedDatabaseOpensRetainedData.)
		again := newDatabase(func(db *dbv1.Database) { db.UID = "11111111-2222-4333-8444-555555555555" })
		before := syncWithKey(t, testKey, first)
		after := syncWithKey(t, testKey, newRequest(t, again, false))
		for _, name := range []string{"orders-credentials", "orders-superuser"} {
			if bytes.Equal(secretData(t, before, name)["password"], secretData(t, after, name)["password"]) {
				t.Errorf("%s: the password of a Database created again under its name must change with its UID", name)
			}
		}
	})

	t.Run("ObservedSecretKept", func(t *testing.T) {
		db := newDatabase()
		observed := map[string][]byte{"username": []byte("app"), "password": []byte("kept\x00binary\xff"), "extra": []byte("x")}
		req := newRequest(t, db, false, observedChildren(t, db, 1, observedSecret(t, db, observed))...)
		for _, key := range [][]byte{testKey, otherKey} {
			got := secretData(t, syncWithKey(t, key, req), "orders-credentials")
			if diff := cmp.Diff(observed, got); diff != "" {
				t.Errorf("observed Secret data must be returned unchanged whatever the key: -want +got:\n%s", diff)
			}
		}
	})

	t.Run("NeverInStatusOrErrors", func(t *testing.T) {
		db := newDatabase()
		password := string(secretData(t, syncWithKey(t, testKey, first), "orders-credentials")["password"])
		resp := syncWithKey(t, testKey, newRequest(t, db, false, observedChildren(t, db, 1)...))
		if strings.Contains(string(resp.Status), password) {
			t.Error("status must never carry the password")
		}
		// A malformed observed Secret: the error names the field, not the data.
		req := newRequest(t, db, false)
		req.Children["Secret.v1"]["orders-credentials"] = json.RawMessage(`{"apiVersion":"v1","kind":"Secret","metadata":{"name":"orders-credentials"},"data":{"password":"not base64: ` + password + `"}}`)
		_, err := mustHook(t)(req, testNow)
		if err == nil || strings.Contains(err.Error(), password) {
			t.Errorf("a malformed Secret must fail without repeating its data, got %v", err)
		}
	})
}

func TestKeyFingerprint(t *testing.T) {
	other := []byte("another-test-key-0123456789abcdef")
	got := KeyFingerprint(testKey)
	if len(got) != 16 || strings.Trim(string(got), "0123456789abcdef") != "" {
		t.Fatalf("KeyFingerprint = %q, want 16 lower-case hex digits", got)
	}
	if !bytes.Equal(KeyFingerprint(bytes.Clone(testKey)), got) {
		t.Error("the same key gave two fingerprints: replicas would disagree on ETags")
	}
	if bytes.Equal(KeyFingerprint(other), got) {
		t.Errorf("two keys gave the same fingerprint %s", got)
	}
	for _, secret := range []string{derivePassword(testKey, "shop", "orders", "u"), deriveSuperuserPassword(testKey, "shop", "orders", "u"), string(testKey)} {
		if strings.Contains(secret, string(got)) {
			t.Errorf("the fingerprint %s is part of a password or the key", got)
		}
	}
}
