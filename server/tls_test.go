package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testCA is a certificate authority made in the test.
type testCA struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	certPEM []byte
}

var serial int64

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key := newKey(t)
	template := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name},
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der := sign(t, template, template, &key.PublicKey, key)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// sign makes a certificate valid for the hour around now, with a fresh serial.
func sign(t *testing.T, template, parent *x509.Certificate, pub *ecdsa.PublicKey, parentKey *ecdsa.PrivateKey) []byte {
	t.Helper()
	serial++
	template.SerialNumber = big.NewInt(serial)
	template.NotBefore, template.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, template, parent, pub, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// issue signs a leaf certificate: a server one for 127.0.0.1 and localhost,
// or a client one. It returns the certificate and key as PEM.
func (ca *testCA) issue(t *testing.T, name string, server bool) (certPEM, keyPEM []byte) {
	t.Helper()
	key := newKey(t)
	template := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		template.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		template.DNSNames = []string{"localhost"}
		template.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der := sign(t, template, ca.cert, &key.PublicKey, ca.key)
	rawKey, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: rawKey})
}

func (ca *testCA) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return pool
}

// clientCert is a client certificate ca signed, for tls.Config.Certificates.
func (ca *testCA) clientCert(t *testing.T, name string) tls.Certificate {
	t.Helper()
	certPEM, keyPEM := ca.issue(t, name, false)
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// servingFiles writes a server key pair from ca into dir.
func servingFiles(t *testing.T, ca *testCA, dir string) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM := ca.issue(t, "metahooks", true)
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	writeTestFile(t, certFile, certPEM)
	writeTestFile(t, keyFile, keyPEM)
	return certFile, keyFile
}

// TestHTTPS: HTTPS with the test CA verifies and answers; plain HTTP to the
// TLS port gets no 200; TLS 1.1 is refused; the key pair replaced by one of
// another CA is presented to new handshakes within 10 s while a connection
// opened before keeps working; a bad pair at reload keeps the last good one.
func TestHTTPS(t *testing.T) {
	dir := t.TempDir()
	oldCA, newCA := newTestCA(t, "old CA"), newTestCA(t, "new CA")
	certFile, keyFile := servingFiles(t, oldCA, dir)
	tokenFile := filepath.Join(dir, "tokens")
	writeTestFile(t, tokenFile, []byte(currentToken+"\n"))
	srv := startAuthServer(t, securityConfig{tokenFile: tokenFile, certFile: certFile, keyFile: keyFile})
	if !strings.HasPrefix(srv.hookURL, "https://") {
		t.Fatalf("hook URL %s, want https", srv.hookURL)
	}
	body := readFile(t, "../examples/requests/database-first-sync.json")
	trustOld, trustNew := &tls.Config{RootCAs: oldCA.pool()}, &tls.Config{RootCAs: newCA.pool()}

	code, answer, err := call(freshClient(trustOld), http.MethodPost, srv.hookURL+"/hooks/database/sync", body, "Authorization", "Bearer "+currentToken)
	if err != nil || code != 200 || !strings.Contains(answer, `"kind":"Secret"`) {
		t.Fatalf("HTTPS with the token: %d %v %.200s, want 200", code, err, answer)
	}
	if code, _, err := call(freshClient(trustOld), http.MethodPost, srv.hookURL+"/hooks/database/sync", body); code != 401 {
		t.Errorf("HTTPS without the token: %d %v, want 401", code, err)
	}
	if code, _, err := call(freshClient(trustNew), http.MethodGet, srv.hookURL+"/readyz", nil); err == nil {
		t.Errorf("a client trusting only the new CA connected before the switch (%d)", code)
	}
	plain := strings.Replace(srv.hookURL, "https://", "http://", 1)
	code, answer, err = call(freshClient(nil), http.MethodPost, plain+"/hooks/database/sync", body, "Authorization", "Bearer "+currentToken)
	if code == 200 || strings.Contains(answer, "Secret") {
		t.Errorf("plain HTTP to the TLS port: %d %v %.200s, want no 200", code, err, answer)
	}
	t.Logf("plain HTTP to the TLS port: %d %.80s", code, answer)
	if _, _, err := call(freshClient(&tls.Config{RootCAs: oldCA.pool(), MinVersion: tls.VersionTLS10, MaxVersion: tls.VersionTLS11}), http.MethodGet, srv.hookURL+"/readyz", nil); err == nil {
		t.Error("a TLS 1.1 handshake succeeded, want TLS 1.2 or later only")
	}

	// A keep-alive connection opened before the switch.
	kept, err := tls.Dial("tcp", strings.TrimPrefix(srv.hookURL, "https://"), trustOld)
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	readyOn := func(conn *tls.Conn) int {
		fmt.Fprintf(conn, "GET /readyz HTTP/1.1\r\nHost: metahooks\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := readyOn(kept); code != 200 {
		t.Fatalf("GET /readyz on a kept connection = %d", code)
	}

	// A bad pair at reload: the certificate of the new CA with the old key.
	newCert, newKey := newCA.issue(t, "metahooks", true)
	writeTestFile(t, certFile, newCert)
	eventually(t, "a bad pair reported", func() bool { return strings.Contains(srv.log.String(), "cannot reload TLS key pair") })
	if code, _, err := call(freshClient(trustOld), http.MethodGet, srv.hookURL+"/readyz", nil); err != nil || code != 200 {
		t.Errorf("after a bad pair: %d %v, want the old certificate still served", code, err)
	}
	// The matching key arrives: the new pair is presented.
	writeTestFile(t, keyFile, newKey)
	eventually(t, "a client trusting only the new CA connects", func() bool {
		code, _, err := call(freshClient(trustNew), http.MethodGet, srv.hookURL+"/readyz", nil)
		return err == nil && code == 200
	})
	if _, _, err := call(freshClient(trustOld), http.MethodGet, srv.hookURL+"/readyz", nil); err == nil {
		t.Error("a client trusting only the old CA still connects after the switch")
	}
	if code := readyOn(kept); code != 200 {
		t.Errorf("the connection opened before the switch: GET /readyz = %d, want 200 (in-flight connections unharmed)", code)
	}
	if strings.Contains(srv.log.String(), "PRIVATE KEY") || strings.Contains(srv.log.String(), currentToken) {
		t.Errorf("a key or token reached the log:\n%s", srv.log)
	}
}

func TestTLSStartErrors(t *testing.T) {
	ca := newTestCA(t, "ca")
	dir := t.TempDir()
	certFile, keyFile := servingFiles(t, ca, dir)
	otherCert, _ := ca.issue(t, "other", true)
	mismatched := filepath.Join(dir, "other.crt")
	writeTestFile(t, mismatched, otherCert)
	garbage := filepath.Join(dir, "garbage")
	writeTestFile(t, garbage, []byte("not PEM"))
	cases := map[string]struct {
		reason string
		args   []string
		want   string
	}{
		"MismatchedPair": {reason: "a certificate with another key", args: []string{"--tls-cert-file", mismatched, "--tls-key-file", keyFile}, want: "private key does not match"},
		"GarbageKey":     {reason: "no PEM in the key file", args: []string{"--tls-cert-file", certFile, "--tls-key-file", garbage}, want: "cannot load the TLS key pair"},
		"MissingCert":    {reason: "no such file", args: []string{"--tls-cert-file", dir + "/none", "--tls-key-file", keyFile}, want: "no such file"},
		"GarbageCA":      {reason: "no certificate in the CA file", args: []string{"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--client-ca-file", garbage}, want: "holds no PEM certificate"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--client-ca-file", certFile}, tc.args...)
			if code := run(args, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%s\nexit %d, stderr %q; want 1 and %q", tc.reason, code, stderr.String(), tc.want)
			}
			if strings.Contains(stderr.String(), "PRIVATE KEY") {
				t.Errorf("the error shows the key: %q", stderr.String())
			}
		})
	}
}

// TestMutualTLS: the hook routes want a client certificate the client CA
// signed; without one, or with a foreign one, they refuse; the probes answer
// without one.
func TestMutualTLS(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA, foreignCA := newTestCA(t, "server CA"), newTestCA(t, "client CA"), newTestCA(t, "foreign CA")
	certFile, keyFile := servingFiles(t, serverCA, dir)
	caFile := filepath.Join(dir, "client-ca.crt")
	writeTestFile(t, caFile, clientCA.certPEM)
	srv := startAuthServer(t, securityConfig{certFile: certFile, keyFile: keyFile, clientCAFile: caFile})
	body := readFile(t, "../examples/requests/database-first-sync.json")
	// withCert sends the certificate whatever CAs the server asks for (a Go
	// client otherwise keeps back one the server's CA list does not name).
	withCert := func(cert ...tls.Certificate) *http.Client {
		return freshClient(&tls.Config{RootCAs: serverCA.pool(), GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
			if len(cert) == 0 {
				return &tls.Certificate{}, nil
			}
			return &cert[0], nil
		}})
	}

	code, answer, err := call(withCert(), http.MethodPost, srv.hookURL+"/hooks/database/sync", body)
	if err != nil || code != 401 || strings.Contains(answer, "Secret") {
		t.Errorf("no client certificate: %d %v %.200s, want 401\n%s", code, err, answer, srv.log)
	}
	code, answer, err = call(withCert(foreignCA.clientCert(t, "intruder")), http.MethodPost, srv.hookURL+"/hooks/database/sync", body)
	if code == 200 || strings.Contains(answer, "Secret") {
		t.Errorf("a certificate of another CA: %d %.200s, want a refusal", code, answer)
	}
	t.Logf("a foreign client certificate: code %d, error %v", code, err)
	code, answer, err = call(withCert(clientCA.clientCert(t, "metacontroller")), http.MethodPost, srv.hookURL+"/hooks/database/sync", body)
	if err != nil || code != 200 || !strings.Contains(answer, `"kind":"Secret"`) {
		t.Errorf("the right client certificate: %d %v %.200s, want 200", code, err, answer)
	}
	for _, path := range []string{"/readyz", "/healthz"} {
		if code, _, err := call(withCert(), http.MethodGet, srv.hookURL+path, nil); err != nil || code != 200 {
			t.Errorf("GET %s without a client certificate: %d %v, want 200 (the kubelet sends none)", path, code, err)
		}
	}
	if code, text, _ := call(freshClient(nil), http.MethodGet, srv.metricsURL+"/metrics", nil); code != 200 || !strings.Contains(text, `metahooks_hook_unauthorized_total{hook="sync",parent="database"} 1`) {
		t.Errorf("metahooks_hook_unauthorized_total does not count the refusal without a certificate")
	}

	// The client CA file replaced: a certificate of the new CA is admitted,
	// one of the old CA no longer, with no restart.
	writeTestFile(t, caFile, foreignCA.certPEM)
	eventually(t, "a certificate of the new client CA admitted", func() bool {
		code, _, err := call(withCert(foreignCA.clientCert(t, "now trusted")), http.MethodPost, srv.hookURL+"/hooks/database/sync", body)
		return err == nil && code == 200
	})
	if code, _, err := call(withCert(clientCA.clientCert(t, "metacontroller")), http.MethodPost, srv.hookURL+"/hooks/database/sync", body); err == nil || code == 200 {
		t.Errorf("a certificate of the replaced client CA: %d %v, want the handshake refused", code, err)
	}
}

// TestRefusalOnClosingConnections: a client that closes after each request
// (Connection: close) gets its 401, every time, and not a broken pipe: the
// refusal reads the body before answering. Without that, one of 5 runs of
// 300 calls got a broken pipe (at call 38).
func TestRefusalOnClosingConnections(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA := newTestCA(t, "server CA"), newTestCA(t, "client CA")
	certFile, keyFile := servingFiles(t, serverCA, dir)
	caFile := filepath.Join(dir, "client-ca.crt")
	writeTestFile(t, caFile, clientCA.certPEM)
	srv := startAuthServer(t, securityConfig{certFile: certFile, keyFile: keyFile, clientCAFile: caFile})
	body := readFile(t, "../examples/requests/database-first-sync.json")
	client := freshClient(&tls.Config{RootCAs: serverCA.pool()})
	for i := range 300 {
		if code, _, err := call(client, http.MethodPost, srv.hookURL+"/hooks/database/sync", body); code != 401 {
			t.Fatalf("call %d without a client certificate: %d %v, want 401", i, code, err)
		}
	}
}

// TestConnectionCapOverTLS: the connection cap sees through TLS (TLS is
// wrapped around the capped listener): at a cap of 1, a TLS connection busy
// with a request is not evicted for a new one, which waits and is then
// served.
func TestConnectionCapOverTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newTestCA(t, "ca")
	certFile, keyFile := servingFiles(t, ca, dir)
	tokenFile := filepath.Join(dir, "tokens")
	writeTestFile(t, tokenFile, []byte(currentToken+"\n"))
	srv := startAuthServer(t, securityConfig{tokenFile: tokenFile, certFile: certFile, keyFile: keyFile}, limitConfig{maxConnections: 1})
	trust := &tls.Config{RootCAs: ca.pool()}
	body := readFile(t, "../examples/requests/database-first-sync.json")

	busy, err := tls.Dial("tcp", strings.TrimPrefix(srv.hookURL, "https://"), trust)
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	fmt.Fprintf(busy, "POST /hooks/database/sync HTTP/1.1\r\nHost: metahooks\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", currentToken, len(body))
	if _, err := busy.Write(body[:10]); err != nil { // in flight, body unfinished
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)

	answered := make(chan int, 1)
	go func() {
		code, _, _ := call(freshClient(trust), http.MethodGet, srv.hookURL+"/readyz", nil)
		answered <- code
	}()
	select {
	case code := <-answered:
		t.Fatalf("a connection past the cap was answered (%d) while the only slot was busy", code)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := busy.Write(body[10:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("the busy TLS request was cut: %v", err)
	}
	resp.Body.Close()
	busy.Close()
	select {
	case code := <-answered:
		if code != 200 {
			t.Errorf("the waiting connection was answered %d, want 200", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting connection was never served")
	}
}

// clientCertWith is a client certificate ca signed from template (subject,
// usages, basic constraints), for tls.Config.Certificates.
func (ca *testCA) clientCertWith(t *testing.T, template *x509.Certificate) tls.Certificate {
	t.Helper()
	key := newKey(t)
	der := sign(t, template, ca.cert, &key.PublicKey, ca.key)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// mutualTLSClient sends cert (none when nil) whatever CAs the server asks
// for, and trusts serverCA; a new connection per request.
func mutualTLSClient(serverCA *testCA, cert *tls.Certificate) *http.Client {
	return freshClient(&tls.Config{RootCAs: serverCA.pool(), GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if cert == nil {
			return &tls.Certificate{}, nil
		}
		return cert, nil
	}})
}

// TestClientCertificateUsage: a client certificate is admitted only when it
// lists the clientAuth extended key usage and is no CA. Go's own
// verification takes a certificate with no extended key usage as good for
// any, and the client CA's own certificate as a chain of one.
func TestClientCertificateUsage(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA := newTestCA(t, "server CA"), newTestCA(t, "client CA")
	certFile, keyFile := servingFiles(t, serverCA, dir)
	caFile := filepath.Join(dir, "client-ca.crt")
	writeTestFile(t, caFile, clientCA.certPEM)
	srv := startAuthServer(t, securityConfig{certFile: certFile, keyFile: keyFile, clientCAFile: caFile})
	body := readFile(t, "../examples/requests/database-first-sync.json")
	leaf := func(usages ...x509.ExtKeyUsage) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: "client"}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usages}
	}
	intermediate := leaf(x509.ExtKeyUsageClientAuth)
	intermediate.IsCA, intermediate.BasicConstraintsValid, intermediate.KeyUsage = true, true, x509.KeyUsageCertSign|x509.KeyUsageDigitalSignature
	cases := map[string]struct {
		reason string
		cert   tls.Certificate
		want   bool
	}{
		"ClientAuth":     {reason: "a leaf for client authentication", cert: clientCA.clientCertWith(t, leaf(x509.ExtKeyUsageClientAuth)), want: true},
		"ClientAndServe": {reason: "a leaf for both", cert: clientCA.clientCertWith(t, leaf(x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)), want: true},
		"NoUsage":        {reason: "no extended key usage: Go takes it as any", cert: clientCA.clientCertWith(t, leaf())},
		"ServerAuthOnly": {reason: "a serving certificate", cert: clientCA.clientCertWith(t, leaf(x509.ExtKeyUsageServerAuth))},
		"AnyUsage":       {reason: "the any usage is not clientAuth", cert: clientCA.clientCertWith(t, leaf(x509.ExtKeyUsageAny))},
		"CAItself":       {reason: "the client CA's own certificate and key", cert: tls.Certificate{Certificate: [][]byte{clientCA.cert.Raw}, PrivateKey: clientCA.key}},
		"SubordinateCA":  {reason: "a CA certificate with the clientAuth usage", cert: clientCA.clientCertWith(t, intermediate)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, answer, err := call(mutualTLSClient(serverCA, &tc.cert), http.MethodPost, srv.hookURL+"/hooks/database/sync", body)
			if admitted := err == nil && code == 200; admitted != tc.want {
				t.Errorf("%s\nadmitted %v (%d %v %.100s), want %v", tc.reason, admitted, code, err, answer, tc.want)
			}
		})
	}
}

// TestTLSFileRevocation: a key pair that goes away keeps the last good one
// served (a key pair grants nothing) and says so in the reload metrics; a
// client CA file that goes away refuses every client certificate, and one
// that does not parse keeps only the CAs both loaded before and still in
// the file (so it never adds one).
func TestTLSFileRevocation(t *testing.T) {
	cases := map[string]struct {
		reason      string
		change      func(t *testing.T, f tlsTestFiles)
		admitted    []string // client CAs whose certificates are admitted after the change
		refused     []string // client CAs whose certificates are refused after the change
		role        string
		wantSuccess string
	}{
		"KeyPairDeleted": {
			reason:      "the key pair deleted: the last good one is still served",
			change:      func(t *testing.T, f tlsTestFiles) { removeTestFile(t, f.cert) },
			admitted:    []string{"client", "other"},
			role:        "tls_keypair",
			wantSuccess: "0",
		},
		"ClientCADeleted": {
			reason:      "the client CA deleted: no client certificate admitted",
			change:      func(t *testing.T, f tlsTestFiles) { removeTestFile(t, f.ca) },
			refused:     []string{"client", "other"},
			role:        "client_ca",
			wantSuccess: "0",
		},
		"ClientCABadBlock": {
			reason: "a block that does not parse: the CA still listed admitted, the one dropped refused, the one added not trusted",
			change: func(t *testing.T, f tlsTestFiles) {
				bad := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("not DER")})
				writeTestFile(t, f.ca, append(append(f.cas["client"].certPEM, bad...), f.cas["new"].certPEM...))
			},
			admitted:    []string{"client"},
			refused:     []string{"other", "new"},
			role:        "client_ca",
			wantSuccess: "0",
		},
		"ClientCACutShort": {
			reason: "the file read while it is written, its last block cut short: the CA still listed admitted, the one dropped refused, the cut one not trusted, and the reload failed",
			change: func(t *testing.T, f tlsTestFiles) {
				cut := f.cas["new"].certPEM[:len(f.cas["new"].certPEM)/2]
				writeTestFile(t, f.ca, append(append([]byte{}, f.cas["client"].certPEM...), cut...))
			},
			admitted:    []string{"client"},
			refused:     []string{"other", "new"},
			role:        "client_ca",
			wantSuccess: "0",
		},
		"ClientCABrokenPEM": {
			reason: "a block whose base64 is broken, between two good ones: pem.Decode skips it, the reload must fail",
			change: func(t *testing.T, f tlsTestFiles) {
				broken := strings.Replace(string(f.cas["other"].certPEM), "\n", "\n!!!\n", 2)
				writeTestFile(t, f.ca, []byte(string(f.cas["client"].certPEM)+broken+string(f.cas["new"].certPEM)))
			},
			admitted:    []string{"client"},
			refused:     []string{"other", "new"},
			role:        "client_ca",
			wantSuccess: "0",
		},
		"ClientCAReplaced": {
			reason:      "a good file: its CAs and no other",
			change:      func(t *testing.T, f tlsTestFiles) { writeTestFile(t, f.ca, f.cas["new"].certPEM) },
			admitted:    []string{"new"},
			refused:     []string{"client", "other"},
			role:        "client_ca",
			wantSuccess: "1",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f := tlsTestFiles{cas: map[string]*testCA{}}
			for _, name := range []string{"server", "client", "other", "new"} {
				f.cas[name] = newTestCA(t, name+" CA")
			}
			f.cert, f.key = servingFiles(t, f.cas["server"], dir)
			f.ca = filepath.Join(dir, "client-ca.crt")
			writeTestFile(t, f.ca, append(append([]byte{}, f.cas["client"].certPEM...), f.cas["other"].certPEM...))
			srv := startAuthServer(t, securityConfig{certFile: f.cert, keyFile: f.key, clientCAFile: f.ca, reloadInterval: 20 * time.Millisecond})
			body := readFile(t, "../examples/requests/database-first-sync.json")
			admitted := func(ca string) bool {
				cert := f.cas[ca].clientCert(t, "metacontroller")
				code, _, err := call(mutualTLSClient(f.cas["server"], &cert), http.MethodPost, srv.hookURL+"/hooks/database/sync", body)
				return err == nil && code == 200
			}
			success := `metahooks_config_last_reload_success{file="` + tc.role + `"}`
			if got := scrapeMetric(t, srv.metricsURL, "", success); got != "1" {
				t.Errorf("at start: %s = %q, want 1", success, got)
			}
			tc.change(t, f)
			for _, ca := range tc.refused {
				eventually(t, "a certificate of "+ca+" CA refused", func() bool { return !admitted(ca) })
			}
			for _, ca := range tc.admitted {
				if !admitted(ca) {
					t.Errorf("%s\na certificate of %s CA refused, want admitted", tc.reason, ca)
				}
			}
			result := map[string]string{"0": "failure", "1": "success"}[tc.wantSuccess]
			eventually(t, "the reload counted as a "+result, func() bool {
				return scrapeMetric(t, srv.metricsURL, "", `metahooks_config_reloads_total{file="`+tc.role+`",result="`+result+`"}`) == "1"
			})
			if got := scrapeMetric(t, srv.metricsURL, "", success); got != tc.wantSuccess {
				t.Errorf("%s\n%s = %q, want %s", tc.reason, success, got, tc.wantSuccess)
			}
		})
	}
}

// tlsTestFiles are the files of a mutual TLS server in a test, and the CAs
// by name.
type tlsTestFiles struct {
	cert, key, ca string
	cas           map[string]*testCA
}
