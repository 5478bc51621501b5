package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/internal/shareddata"
)

// dataDir is shareddata.Dir: ../shared/data/<sub>, or a skip.
var dataDir = shareddata.Dir

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
