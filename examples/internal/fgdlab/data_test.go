package fgdlab

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/schedkit/schedkit/examples/internal/openb"
	"github.com/schedkit/schedkit/internal/shareddata"
)

// dataDir returns ../shared/data beside the checkout when both folders the
// replay reads are there, or skips the test.
func dataDir(tb testing.TB) string {
	tb.Helper()
	shareddata.Dir(tb, "hkust-adsl-kss-expected-results")
	return filepath.Dir(shareddata.Dir(tb, "alibaba-clusterdata-gpu-v2023"))
}

func openFile(tb testing.TB, path string) *os.File {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// loadDefault loads the default openb trace on the 1213 GPU nodes.
func loadDefault(tb testing.TB) (*Experiment, Expected) {
	tb.Helper()
	data := dataDir(tb)
	csvDir := filepath.Join(data, "alibaba-clusterdata-gpu-v2023", "csv")
	nodes, _, err := openb.ReadNodesFile(filepath.Join(csvDir, "openb_node_list_gpu_node.csv"), openb.Strict)
	if err != nil {
		tb.Fatal(err)
	}
	pods, _, err := openb.ReadPodsFile(filepath.Join(csvDir, "openb_pod_list_default.csv"), openb.Strict)
	if err != nil {
		tb.Fatal(err)
	}
	e, err := NewExperiment(nodes, pods)
	if err != nil {
		tb.Fatal(err)
	}
	exp, err := ReadExpected(openFile(tb, filepath.Join(data, "hkust-adsl-kss-expected-results", "analysis_allo_discrete.csv")),
		"openb_pod_list_default", TuneRatio)
	if err != nil {
		tb.Fatal(err)
	}
	return e, exp
}
