package load

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

func TestRequestsRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	var r Requests
	r.Register(fs)
	if err := fs.Parse([]string{"-myapp-request", write("m.json", "{\n  \"parent\": { \"a\": 1 }\n}\n"), "-database-request", write("d.json", `{"parent":{}}`)}); err != nil {
		t.Fatal(err)
	}
	if err := r.Read(); err != nil {
		t.Fatal(err)
	}
	if string(r.MyApp) != `{"parent":{"a":1}}` || string(r.Database) != `{"parent":{}}` {
		t.Errorf("Read gave %s and %s, want both compact", r.MyApp, r.Database)
	}
	r.DatabaseFile = write("bad.json", `{"parent":`)
	if err := r.Read(); err == nil {
		t.Error("Read of a file that is not JSON: no error")
	}
}
