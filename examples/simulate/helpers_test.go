package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// dataDir returns ../shared/data beside the checkout (the directory
// holding go.work), or skips the test with a clear message when sub is
// not there.
func dataDir(tb testing.TB, sub string) string {
	tb.Helper()
	dir, err := os.Getwd()
	require.NoError(tb, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("no go.work above the package directory, so ../shared/data cannot be located: skipping the real-data test")
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", sub)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("real data not available (%s missing): skipping", p)
	}
	return p
}

// result is one call of run.
type result struct {
	code           int
	stdout, stderr string
}

// runMain calls the program's run function.
func runMain(tb testing.TB, args ...string) result {
	tb.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// jsonReport runs with -o json and decodes the report; it fails the test
// unless the run exits 0.
func jsonReport(tb testing.TB, args ...string) (*report, result) {
	tb.Helper()
	r := runMain(tb, append(args, "-o", "json")...)
	require.Equal(tb, exitOK, r.code, "stderr: %s", r.stderr)
	var rep report
	require.NoError(tb, json.Unmarshal([]byte(r.stdout), &rep))
	return &rep, r
}

// placementRow is one line of a -placements file.
type placementRow struct {
	policy, seed, pod, node string
	devices                 []string
	prebound                bool
}

func readPlacements(tb testing.TB, path string) []placementRow {
	tb.Helper()
	f, err := os.Open(path)
	require.NoError(tb, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(tb, err)
	require.Equal(tb, []string{"policy", "seed", "pod", "node", "devices", "prebound"}, recs[0])
	var rows []placementRow
	for _, r := range recs[1:] {
		row := placementRow{policy: r[0], seed: r[1], pod: r[2], node: r[3], prebound: r[5] == "true"}
		if r[4] != "" {
			row.devices = strings.Fields(r[4])
		}
		rows = append(rows, row)
	}
	return rows
}
