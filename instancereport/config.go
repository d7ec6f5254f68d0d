package instancereport

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"
)

// In-cluster defaults: where the kubelet mounts a service-account token
// volume, and the address every pod is given of the API server.
const (
	DefaultTokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	DefaultCAFile    = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"

	defaultPoll      = time.Second
	defaultHeartbeat = 10 * time.Second
)

// Config is what the agent needs: which file to publish on which pod, and how
// to reach the API server.
type Config struct {
	ReportFile  string // the report scripts/instance.sh writes
	TopologyDir string // the mounted record; "" to ignore it
	Namespace   string
	Pod         string

	APIServer string // https://host:port
	TokenFile string
	CAFile    string

	Poll      time.Duration // how often the file is read (default 1 s)
	Heartbeat time.Duration // how often an unchanged state is refreshed (default 10 s)
	Logger    *slog.Logger
}

// InClusterAPIServer is the API server's address as the kubelet gives it to
// every pod; "" outside a pod.
func InClusterAPIServer() string {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return ""
	}
	return "https://" + net.JoinHostPort(host, port)
}

func (c *Config) validate() error {
	var missing []string
	for _, f := range []struct{ name, value string }{
		{"--report-file", c.ReportFile}, {"--namespace", c.Namespace}, {"--pod", c.Pod},
		{"--api-server", c.APIServer}, {"--token-file", c.TokenFile}, {"--ca-file", c.CAFile},
	} {
		if f.value == "" {
			missing = append(missing, f.name)
		}
	}
	if len(missing) > 0 {
		return errors.New("instance-report needs " + strings.Join(missing, ", "))
	}
	if c.Poll <= 0 {
		c.Poll = defaultPoll
	}
	if c.Heartbeat <= 0 {
		c.Heartbeat = defaultHeartbeat
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}
