package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlacementsDash: -placements - writes the CSV to standard output,
// alone (the report goes to standard error), and creates no file named
// "-"; the rows are those -placements FILE writes.
func TestPlacementsDash(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	args := []string{"-scale", "0.05", "-policy", "fgd", "-timing=false", "-o", "json"}
	r := runMain(t, append(args, "-placements", "-")...)
	require.Equal(t, exitOK, r.code, r.stderr)
	_, err := os.Stat("-")
	assert.True(t, os.IsNotExist(err), "a file named - was written")

	recs, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	require.NoError(t, err, "stdout is CSV alone")
	require.Equal(t, []string{"policy", "seed", "pod", "node", "devices", "prebound"}, recs[0])
	var rep report
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &rep), "the report is on stderr")
	require.Len(t, rep.Summaries, 1)

	file := runMain(t, append(args, "-placements", "p.csv")...)
	require.Equal(t, exitOK, file.code, file.stderr)
	b, err := os.ReadFile("p.csv")
	require.NoError(t, err)
	assert.Equal(t, string(b), r.stdout, "the same CSV as -placements FILE")
	assert.Equal(t, 401, len(recs), "a header and one row per pod of the 0.05 scale")
}
