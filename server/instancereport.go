package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"metahooks/hooks/database"
	"os"
	"os/signal"
	"syscall"

	"metahooks/instancereport"
)

// instanceReportCommand runs the agent of one PostgreSQL instance (container
// "reporter" of a Database with instances >= 2): it publishes the report
// file on the instance's own pod until SIGTERM.
func instanceReportCommand(args []string, stderr io.Writer) int {
	cfg := instancereport.Config{}
	fs := flag.NewFlagSet("instance-report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.ReportFile, "report-file", database.ReportFile, "the report scripts/instance.sh writes")
	fs.StringVar(&cfg.TopologyDir, "topology-dir", "/etc/topology", "the mounted topology record (every change is published during a switchover); empty to ignore")
	fs.StringVar(&cfg.Namespace, "namespace", os.Getenv("POD_NAMESPACE"), "the pod's namespace (default $POD_NAMESPACE)")
	fs.StringVar(&cfg.Pod, "pod", os.Getenv("POD_NAME"), "the pod's name (default $POD_NAME)")
	fs.StringVar(&cfg.APIServer, "api-server", instancereport.InClusterAPIServer(), "the API server (default from $KUBERNETES_SERVICE_HOST and $KUBERNETES_SERVICE_PORT)")
	fs.StringVar(&cfg.TokenFile, "token-file", instancereport.DefaultTokenFile, "the service-account token (re-read as it rotates)")
	fs.StringVar(&cfg.CAFile, "ca-file", instancereport.DefaultCAFile, "the API server's CA bundle (re-read when it changes)")
	fs.DurationVar(&cfg.Poll, "poll", 0, "how often the report file is read (default 1s)")
	fs.DurationVar(&cfg.Heartbeat, "heartbeat", 0, "how often a report whose state has not changed is published again (default 10s)")
	var level slog.Level
	fs.TextVar(&level, "log-level", slog.LevelInfo, "log level: debug, info, warn, error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "metahooks instance-report: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	cfg.Logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := instancereport.Run(ctx, cfg); err != nil {
		fmt.Fprintln(stderr, "metahooks instance-report:", err)
		return 2
	}
	return 0
}
