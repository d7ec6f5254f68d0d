package load

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
)

// Requests are the hook requests the benchmarks send: the captured MyApp
// sync and a running Database's, read from files and sent compact, as
// Metacontroller sends them.
type Requests struct {
	MyAppFile, DatabaseFile string
	MyApp, Database         []byte // compact, once Read ran
}

// Register adds -myapp-request and -database-request to fs.
func (r *Requests) Register(fs *flag.FlagSet) {
	fs.StringVar(&r.MyAppFile, "myapp-request", "server/testdata/metacontroller/sync-03-children-with-status.json", "MyApp sync request (sent compact)")
	fs.StringVar(&r.DatabaseFile, "database-request", "examples/requests/database-credentials-observed.json", "Database sync request (sent compact)")
}

// Read reads both files, compact.
func (r *Requests) Read() error {
	var err error
	if r.MyApp, err = compactFile(r.MyAppFile); err != nil {
		return err
	}
	r.Database, err = compactFile(r.DatabaseFile)
	return err
}

// compactFile reads a JSON file and returns it compact.
func compactFile(path string) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b.Bytes(), nil
}
