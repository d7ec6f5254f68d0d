package instancereport

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"metahooks/hooks/database"
)

// apiServer records what a fake API server is sent, and answers status.
type apiServer struct {
	mu       sync.Mutex
	requests []recorded
	status   int
}

type recorded struct {
	Method, Path, ContentType, Authorization string
	Body                                     map[string]any
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	rec := recorded{Method: r.Method, Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Authorization: r.Header.Get("Authorization")}
	_ = json.Unmarshal(raw, &rec.Body)
	s.mu.Lock()
	s.requests = append(s.requests, rec)
	status := s.status
	s.mu.Unlock()
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"kind":"Status","message":"echo of the request: ` + strings.ReplaceAll(string(raw), `"`, `'`) + `"}`))
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestPublish: the report goes to pods/<pod>/status as a JSON merge patch of
// labels and annotations, with the token of the file; an error answer names
// the status, never the body; a CA that changes on disk is picked up.
func TestPublish(t *testing.T) {
	fake := &apiServer{status: http.StatusOK}
	srv := httptest.NewTLSServer(fake)
	defer srv.Close()
	dir := t.TempDir()
	caFile, tokenFile := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "token")
	goodCA := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	writeFile(t, caFile, goodCA)
	writeFile(t, tokenFile, "token-one\n")
	c, err := newPodClient(&Config{APIServer: srv.URL, Namespace: "shop", Pod: "orders-1", TokenFile: tokenFile, CAFile: caFile})
	if err != nil {
		t.Fatal(err)
	}
	r, err := database.ParseInstanceReport([]byte(reportFile("standby", "true", "0/100", "2026-12-01T10:00:00Z")))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.publish(context.Background(), r); err != nil {
		t.Fatalf("publish: %v", err)
	}
	want := recorded{
		Method: http.MethodPatch, Path: "/api/v1/namespaces/shop/pods/orders-1/status",
		ContentType: "application/merge-patch+json", Authorization: "Bearer token-one",
		Body: map[string]any{"metadata": map[string]any{
			"labels": map[string]any{"example.com/role": "standby"},
			"annotations": map[string]any{"example.com/timeline": "2", "example.com/lsn": "0/100",
				"example.com/receiving": "true", "example.com/epoch": "0", "example.com/reported-at": "2026-12-01T10:00:00Z"},
		}},
	}
	if diff := cmp.Diff([]recorded{want}, fake.requests); diff != "" {
		t.Errorf("request (-want +got):\n%s", diff)
	}

	fake.status = http.StatusForbidden
	err = c.publish(context.Background(), r)
	if err == nil || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "echo") {
		t.Errorf("publish on 403: error %v; want one naming the status and not the body", err)
	}

	// Another CA: the server is no longer trusted; back: trusted again.
	writeFile(t, caFile, otherCA(t))
	fake.status = http.StatusOK
	if err := c.publish(context.Background(), r); err == nil {
		t.Error("publish trusted a server whose CA is no longer in the CA file")
	}
	writeFile(t, caFile, goodCA)
	if err := c.publish(context.Background(), r); err != nil {
		t.Errorf("publish after the CA file came back: %v", err)
	}
}

// otherCA is a self-signed CA certificate that signed nothing the test
// server presents.
func otherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "other"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

func TestNewPodClientRefusesPlainHTTP(t *testing.T) {
	for _, server := range []string{"http://127.0.0.1:6443", "127.0.0.1:6443", "https://"} {
		if _, err := newPodClient(&Config{APIServer: server, Namespace: "shop", Pod: "orders-0"}); err == nil {
			t.Errorf("newPodClient(%q) accepted an address that is not https://host", server)
		}
	}
}
