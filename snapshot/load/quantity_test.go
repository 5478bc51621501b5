package load

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/quantity"
	"github.com/schedkit/schedkit/internal/shareddata"
)

// FuzzSlowQuantityScreen: the cheap pre-test lets through every document
// holding a string Screen refuses, as a JSON string or number, and the
// field walk finds it exactly when Screen refuses it.
func FuzzSlowQuantityScreen(f *testing.F) {
	for _, s := range []string{"1", "100m", "1e-999999999", "1.5E+0000000000000010001", "1234567890123456789e10001", ".5e-10001", "1e4294967297", "0e-999999999", " 7e-99999 ", "\u00a01e-99999\u2003", "sha256:3e48291f", "a1e23456"} {
		f.Add(s)
	}
	podType := reflect.TypeFor[v1.Pod]()
	f.Fuzz(func(t *testing.T, s string) {
		refused := quantity.Screen(s) != nil
		text, err := json.Marshal(s)
		require.NoError(t, err)
		js := []byte(`{"apiVersion":"v1","kind":"Pod","spec":{"containers":[{"resources":{"requests":{"cpu":` + string(text) + `}}}]}}`)
		if refused && string(text) == `"`+s+`"` {
			// What apimachinery parses is the raw text between the
			// quotes: when it is s, the pre-test must not miss it (an
			// escaped s reaches ParseQuantity with its escapes, which it
			// refuses at once).
			require.True(t, maySlowQuantity(js), "pre-test missed %q", s)
		}
		got := slowQuantities(js, podType)
		if !refused {
			require.Empty(t, got, "%q", s)
			return
		}
		require.Len(t, got, 1, "%q", s)
		require.Equal(t, "spec.containers[0].resources.requests[cpu]", got[0].field)
	})
}

// BenchmarkScreenQuantities compares reading real inputs with the quantity
// screen off and on, interleaved in one binary: the cost on normal input
// is the pre-test's one pass over each document's JSON.
func BenchmarkScreenQuantities(b *testing.B) {
	openb := filepath.Join(shareddata.Dir(b, "alibaba-clusterdata-gpu-v2023"), "node_yaml", "openb_node_list_gpu_node.yaml")
	data, err := os.ReadFile(openb)
	require.NoError(b, err)
	osdir := filepath.Join(shareddata.Dir(b, "openshift-insights-archive-sample"), "pod")
	var pods []byte // the 19 pod JSON files, concatenated
	require.NoError(b, filepath.WalkDir(osdir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			js, rerr := os.ReadFile(p)
			pods = append(append(pods, js...), '\n')
			return rerr
		}
		return err
	}))
	defer func() { screenQuantities = true }()
	for _, in := range []struct {
		name string
		data []byte
	}{{"openb-nodes-yaml", data}, {"openshift-pods-json", pods}} {
		for _, on := range []bool{false, true} {
			b.Run("input="+in.name+"/screen="+strconv.FormatBool(on), func(b *testing.B) {
				screenQuantities = on
				b.SetBytes(int64(len(in.data)))
				b.ReportAllocs()
				for b.Loop() {
					if _, err := Read(bytes.NewReader(in.data), in.name); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkMaySlowQuantity: the pre-test alone on a real pod's JSON.
func BenchmarkMaySlowQuantity(b *testing.B) {
	dir := filepath.Join(shareddata.Dir(b, "openshift-insights-archive-sample"), "pod", "openshift-insights")
	js, err := os.ReadFile(filepath.Join(dir, "insights-operator-5d876b745-t8z24.json"))
	require.NoError(b, err)
	b.SetBytes(int64(len(js)))
	b.ReportAllocs()
	for b.Loop() {
		if maySlowQuantity(js) {
			b.Fatal("pre-test fired")
		}
	}
}

// The pre-test alone allocates nothing.
func TestMaySlowQuantityAllocatesNothing(t *testing.T) {
	js := []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","uid":"3e4f5a6b-1e23-4c5d"},"spec":{"containers":[{"resources":{"requests":{"cpu":"1e3","memory":"1.5e9"}}}]}}`)
	require.False(t, maySlowQuantity(js))
	require.Zero(t, testing.AllocsPerRun(100, func() { maySlowQuantity(js) }))
}

// On real inputs the pre-test lets every document through without the
// field walk (digests such as "sha256:3e48291f..." and uids hold
// exponent-like runs).
func TestMaySlowQuantityQuietOnRealData(t *testing.T) {
	dir := shareddata.Dir(t, "openshift-insights-archive-sample")
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".json" {
			return err
		}
		js, err := os.ReadFile(p)
		require.NoError(t, err)
		require.False(t, maySlowQuantity(js), "%s", p)
		n++
		return nil
	}))
	require.Equal(t, 25, n, "6 nodes and 19 pods")
}
