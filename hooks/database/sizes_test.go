package database

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/google/go-cmp/cmp"

	dbv1 "metahooks/api/v1"
)

// sizeOrder is the order the size tables list the presets in.
var sizeOrder = []dbv1.DatabaseSize{dbv1.SizeSmall, dbv1.SizeMedium, dbv1.SizeLarge}

// sizeColumn is one column of the size tables: its heading in docs/database.md
// and in doc.go ("" where that table has no such column), and its cell of a preset.
type sizeColumn struct {
	docs, pkg string
	cell      func(size dbv1.DatabaseSize, p preset) string
}

var sizeColumns = []sizeColumn{
	{"size", "size", func(size dbv1.DatabaseSize, _ preset) string { return string(size) }},
	{"CPU request / limit", "CPU req/limit", func(_ dbv1.DatabaseSize, p preset) string { return p.cpuRequest + " / " + p.cpuLimit }},
	{"memory (request = limit)", "memory", func(_ dbv1.DatabaseSize, p preset) string { return p.memory }},
	{"storage (data, and backups)", "storage", func(_ dbv1.DatabaseSize, p preset) string { return p.storage }},
	{"/dev/shm", "/dev/shm", func(_ dbv1.DatabaseSize, p preset) string { return p.sharedMemory }},
	{"max_connections", "max_connections", func(_ dbv1.DatabaseSize, p preset) string { return fmt.Sprint(p.maxConnections) }},
	{"shared_buffers", "shared_buffers", func(_ dbv1.DatabaseSize, p preset) string { return p.sharedBuffers }},
	{"effective_cache_size", "effective_cache_size", func(_ dbv1.DatabaseSize, p preset) string { return p.effectiveCacheSize }},
	{"work_mem", "work_mem", func(_ dbv1.DatabaseSize, p preset) string { return p.workMem }},
	{"maintenance_work_mem", "maintenance_work_mem", func(_ dbv1.DatabaseSize, p preset) string { return p.maintenanceWorkMem }},
	{"wal_buffers", "", func(_ dbv1.DatabaseSize, p preset) string { return p.walBuffers }},
	{"min/max_wal_size", "", func(_ dbv1.DatabaseSize, p preset) string { return p.minWALSize + " / " + p.maxWALSize }},
	{"", "max_wal_size", func(_ dbv1.DatabaseSize, p preset) string { return p.maxWALSize }},
	{"parallel workers (total / per gather)", "", func(_ dbv1.DatabaseSize, p preset) string {
		return fmt.Sprintf("%d / %d", p.maxParallelWorkers, p.maxParallelPerGather)
	}},
}

// sizeRows are the rows of one size table, headings first; heading picks the
// table's heading of a column.
func sizeRows(heading func(sizeColumn) string) [][]string {
	rows := make([][]string, 1+len(sizeOrder))
	for _, c := range sizeColumns {
		if heading(c) == "" {
			continue
		}
		rows[0] = append(rows[0], heading(c))
		for i, size := range sizeOrder {
			rows[1+i] = append(rows[1+i], c.cell(size, presets[size]))
		}
	}
	return rows
}

// markdownSizeTable is the table of docs/database.md.
func markdownSizeTable() string {
	var b strings.Builder
	for i, row := range sizeRows(func(c sizeColumn) string { return c.docs }) {
		b.WriteString("| " + strings.Join(row, " | ") + " |\n")
		if i == 0 {
			b.WriteString(strings.Repeat("|---", len(row)) + "|\n")
		}
	}
	return b.String()
}

// commentSizeTable is the table of doc.go: a preformatted comment block.
func commentSizeTable() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, row := range sizeRows(func(c sizeColumn) string { return c.pkg }) {
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	w.Flush()
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		out.WriteString("//\t" + strings.TrimRight(line, " ") + "\n")
	}
	return out.String()
}

// TestSizeTables: the size tables of docs/database.md and doc.go are the
// presets of sizes.go. With -update both are rewritten from sizes.go.
func TestSizeTables(t *testing.T) {
	if len(presets) != len(sizeOrder) {
		t.Fatalf("sizes.go has %d presets, the tables list %d (sizeOrder)", len(presets), len(sizeOrder))
	}
	cases := map[string]struct {
		path, begin, end, table string
	}{
		"docs": {
			path:  "../../docs/database.md",
			begin: "<!-- size table: from hooks/database/sizes.go; go test ./hooks/database -run TestSizeTables -update -->\n",
			end:   "<!-- end of the size table -->\n",
			table: markdownSizeTable(),
		},
		"package": {
			path:  "doc.go",
			begin: "(TestSizeTables checks it):\n//\n",
			end:   "//\n// Storage:",
			table: commentSizeTable(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(tc.path)
			if err != nil {
				t.Fatal(err)
			}
			text := string(raw)
			before, rest, found := strings.Cut(text, tc.begin)
			if !found {
				t.Fatalf("%s has no line %q before its size table", tc.path, tc.begin)
			}
			table, after, found := strings.Cut(rest, tc.end)
			if !found {
				t.Fatalf("%s has no line %q after its size table", tc.path, tc.end)
			}
			if *update {
				table = tc.table
				if err := os.WriteFile(tc.path, []byte(before+tc.begin+table+tc.end+after), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.table, table); diff != "" {
				t.Errorf("the size table of %s is not sizes.go's (-update to rewrite it): -sizes.go +%s:\n%s", tc.path, tc.path, diff)
			}
		})
	}
}
