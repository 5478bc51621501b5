package fgdlab

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/schedkit/schedkit/examples/internal/openb"
)

// dataDir returns ../shared/data beside the checkout (the directory holding
// go.work), or skips the test when it is absent.
func dataDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("no go.work above the package directory; ../shared/data not located")
		}
		dir = parent
	}
	data := filepath.Join(dir, "..", "shared", "data")
	for _, sub := range []string{"alibaba-clusterdata-gpu-v2023", "hkust-adsl-kss-expected-results"} {
		if _, err := os.Stat(filepath.Join(data, sub)); err != nil {
			tb.Skipf("real data not available (%s missing): skipping the openb replay", filepath.Join(data, sub))
		}
	}
	return data
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
