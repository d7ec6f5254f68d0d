package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Shared by every test in the package: one API server, one hook process.
var (
	k8s client.Client
	// apiConfig is the first control plane's admin config (its CA and
	// address serve tests that call it as other users).
	apiConfig *rest.Config
	hookURL   string // http://127.0.0.1:<port>
	// metahooksBinary is the real binary the hook process runs, built once.
	metahooksBinary string
	// hookToken is the bearer token the hook process accepts, as
	// Metacontroller sends it (webhook.authorization).
	hookToken = "e2e-hook-token-7c1f4a9d2e6b8035"
	repo      string // repository root
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	if repo, err = filepath.Abs("../.."); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	assets, err := kubeAssets()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot get kube-apiserver and etcd:", err)
		return 1
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     crdPaths(),
		// kube-apiserver takes 15-20 s to start on 2 busy cores; the default
		// 20 s (retried) is not always enough.
		ControlPlaneStartTimeout: 3 * time.Minute,
		ErrorIfCRDPathMissing:    true,
		Scheme:                   scheme,
	}
	started := time.Now()
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot start kube-apiserver and etcd:", err)
		_ = env.Stop() // Start may fail after the processes are up (a bad CRD)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: cannot stop the API server:", err)
		}
	}()
	fmt.Fprintf(os.Stderr, "e2e: kube-apiserver and etcd from %s up in %s\n", assets, time.Since(started).Round(time.Millisecond))
	apiConfig = cfg
	if k8s, err = client.New(cfg, client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}

	stop, err := startHookService()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot start metahooks:", err)
		return 1
	}
	defer stop()
	defer stopCluster() // the full-loop tests' cluster, if one started it
	return m.Run()
}

// crdPaths are the CRDs every control plane of the tests serves.
func crdPaths() []string {
	return []string{
		filepath.Join(repo, "deploy", "crds"),
		filepath.Join(repo, "test", "e2e", "testdata", "compositecontroller-crd.yaml"),
	}
}

// kubeAssets is the folder with kube-apiserver and etcd: KUBEBUILDER_ASSETS,
// or what hack/kube-binaries/build.sh builds (cached after the first time).
func kubeAssets() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, nil
	}
	cmd := exec.Command(filepath.Join(repo, "hack", "kube-binaries", "build.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// startHookService builds the real binary and runs `metahooks serve` on a free
// loopback port, reading the port from its startup log line.
func startHookService() (stop func(), err error) {
	dir, err := os.MkdirTemp("", "metahooks-e2e-")
	if err != nil {
		return nil, err
	}
	binary := filepath.Join(dir, "metahooks")
	metahooksBinary = binary
	build := exec.Command("go", "build", "-o", binary, "./server")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build: %v: %s", err, out)
	}
	keyFile := filepath.Join(dir, "credentials-key")
	if err := os.WriteFile(keyFile, []byte("e2e-credentials-key-0123456789abcdef0123456789"), 0o600); err != nil {
		return nil, err
	}
	tokenFile := filepath.Join(dir, "hook-tokens")
	if err := os.WriteFile(tokenFile, []byte(hookToken+"\n"), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(binary, serveArgs(keyFile, tokenFile)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop = func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		_ = os.RemoveAll(dir)
	}
	addr := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stderr)
		for lines.Scan() {
			var entry struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal(lines.Bytes(), &entry) == nil && entry.Addr != "" && strings.HasPrefix(entry.Msg, "serving") {
				addr <- entry.Addr
			}
		}
	}()
	select {
	case a := <-addr:
		hookURL = "http://" + a
	case <-time.After(30 * time.Second):
		stop()
		return nil, fmt.Errorf("metahooks did not log its address within 30s")
	}
	return stop, nil
}

// agentImage is the image the e2e hook process is told it runs as: the
// reporter containers of Databases with instances >= 2 get it.
const agentImage = "registry.example/metahooks:e2e"

// serveArgs are the flags the e2e hook process runs with: authentication on
// (bearer tokens), both listeners on free loopback ports.
func serveArgs(keyFile, tokenFile string) []string {
	return []string{"serve", "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--shutdown-delay", "0s",
		"--credentials-key-file", keyFile, "--auth-token-file", tokenFile, "--instance-agent-image", agentImage}
}

// postHook sends a request body to a hook route of the running service,
// with the given header pairs, and returns the answer and its ETag.
func postHook(t *testing.T, route string, body []byte, header ...string) (int, []byte, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, hookURL+route, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+hookToken)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", route, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw, resp.Header.Get("ETag")
}

// testContext is a context bounded for one API call sequence.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}
