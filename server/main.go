package main

import (
	"fmt"
	"io"
	"os"
)

// version is stamped at build time: -ldflags "-X main.version=v1.2.3".
var version = "dev"

const usage = `metahooks serves Metacontroller CompositeController hooks for MyApp and Database.

Usage:
  metahooks serve  --auth-token-file F | --client-ca-file CA [--tls-cert-file C --tls-key-file K]
                   [--credentials-key-file K] [--instance-agent-image IMAGE]
                   [--addr :8080] [--metrics-addr :9090] [--max-body-bytes 8388608] [--log-level info]
  metahooks render -f parent.yaml [-n namespace] [--observed children.yaml] [--finalizing] [--now RFC3339]
                   [--credentials-key-file K] [--instance-agent-image IMAGE]
  metahooks render --request request.json [--now RFC3339]
  metahooks instance-report [--pod $POD_NAME --namespace $POD_NAMESPACE] [--report-file /run/metahooks-report/report]
  metahooks version

Every flag of every command follows ("metahooks <command> -h" shows one's).
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run dispatches a command line and returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "serve":
		return serveCommand(args[1:], stderr)
	case "render":
		return renderCommand(args[1:], os.Stdin, stdout, stderr)
	case "instance-report":
		return instanceReportCommand(args[1:], stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, version)
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		for _, command := range []func(io.Writer) int{
			func(w io.Writer) int { return serveCommand([]string{"-h"}, w) },
			func(w io.Writer) int { return renderCommand([]string{"-h"}, nil, w, w) },
			func(w io.Writer) int { return instanceReportCommand([]string{"-h"}, w) },
		} {
			fmt.Fprintln(stdout)
			if code := command(stdout); code != 0 {
				return code
			}
		}
		return 0
	default:
		fmt.Fprintf(stderr, "metahooks: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}
