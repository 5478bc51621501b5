package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/internal/shareddata"
	"github.com/schedkit/schedkit/snapshot"
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

// boundPod returns a shallow copy of pod bound to node, with the devices it
// was given in the gpu-index annotation (GPU pods only): the object an
// informer reports after the trace's scheduler binds it. The replay
// reports the parsed pod instead (TestBoundPod: the same state).
func boundPod(pod *v1.Pod, node string, devs gpushare.DeviceSet) *v1.Pod {
	c := *pod
	c.Spec.NodeName = node
	if devs.Len() > 0 {
		c.Annotations = make(map[string]string, len(pod.Annotations)+1)
		for k, v := range pod.Annotations {
			c.Annotations[k] = v
		}
		c.Annotations[openb.AnnotationGPUIndex] = formatIndex(devs)
	}
	return &c
}

// formatIndex formats devices as the gpu-index annotation: "0-3".
func formatIndex(devs gpushare.DeviceSet) string {
	var buf [gpushare.MaxDevices]int
	var b strings.Builder
	for i, k := range devs.AppendIndexes(buf[:0]) {
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(strconv.Itoa(k))
	}
	return b.String()
}

// mustPodInfo parses pod with the trace's device schema; it panics on
// error (test inputs are valid).
func mustPodInfo(pod *v1.Pod) *snapshot.PodInfo {
	pi, err := snapshot.DecodePodInfo(pod, openb.Devices)
	if err != nil {
		panic(err)
	}
	return pi
}
