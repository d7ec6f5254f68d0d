package instancereport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"

	"k8s.io/client-go/rest"

	"metahooks/hooks/database"
)

// podClient patches one pod's status subresource. client-go's transport
// re-reads the token file (it rotates); the CA is read here at each patch
// and the transport rebuilt when it changed.
type podClient struct {
	cfg  *Config
	url  string
	ca   []byte
	http *http.Client
}

func newPodClient(cfg *Config) (*podClient, error) {
	u, err := url.Parse(cfg.APIServer)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("--api-server must be an https:// URL, got %q", cfg.APIServer)
	}
	u.Path = "/api/v1/namespaces/" + url.PathEscape(cfg.Namespace) + "/pods/" + url.PathEscape(cfg.Pod) + "/status"
	return &podClient{cfg: cfg, url: u.String()}, nil
}

// transport is the HTTP client for the CA file as it is now.
func (c *podClient) transport() (*http.Client, error) {
	ca, err := os.ReadFile(c.cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("cannot read the CA file: %w", err)
	}
	if c.http != nil && bytes.Equal(ca, c.ca) {
		return c.http, nil
	}
	h, err := rest.HTTPClientFor(&rest.Config{
		Host:            c.cfg.APIServer,
		BearerTokenFile: c.cfg.TokenFile,
		TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		UserAgent:       "metahooks-instance-report",
	})
	if err != nil {
		return nil, fmt.Errorf("cannot configure the API client: %w", err)
	}
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
	c.ca, c.http = ca, h
	return h, nil
}

// publish puts r on the pod: a JSON merge patch of its labels and
// annotations (other keys are left as they are).
func (c *podClient) publish(ctx context.Context, r database.PodReport) error {
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": r.Labels, "annotations": r.Annotations}})
	if err != nil {
		return err
	}
	h, err := c.transport()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPatch, c.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/merge-patch+json")
	req.Header.Set("Accept", "application/json")
	resp, err := h.Do(req)
	if err != nil {
		return fmt.Errorf("cannot patch pod %s/%s: %w", c.cfg.Namespace, c.cfg.Pod, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		// The body is not logged: it may repeat what was sent.
		return fmt.Errorf("cannot patch pod %s/%s: the API server answered %s", c.cfg.Namespace, c.cfg.Pod, resp.Status)
	}
	return nil
}
