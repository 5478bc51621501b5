package load_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load"
	"github.com/schedkit/schedkit/snapshot/load/openb"
)

// fedCache feeds objs to a new full cache as a caller of Read does.
func fedCache(t testing.TB, objs load.Objects) (*snapshot.Cache, error) {
	t.Helper()
	c := snapshot.NewCache()
	for _, n := range objs.Nodes {
		if err := c.AddNode(n); err != nil {
			return nil, err
		}
	}
	for _, p := range objs.Pods {
		if err := c.AddPod(p); err != nil {
			return nil, err
		}
	}
	for _, o := range objs.Others {
		if err := c.AddObject(o); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// cacheState is what a cache holds, comparable across full and lean
// records: per node its totals and pod keys, and the cache's pod count.
func cacheState(c *snapshot.Cache) []string {
	s := c.Snapshot()
	out := []string{fmt.Sprint("pods ", c.NumPods())}
	for _, ni := range s.Nodes() {
		keys := make([]string, 0, ni.NumPods())
		for _, p := range ni.Pods() {
			keys = append(keys, p.Key().String()+"@"+p.NodeName())
		}
		slices.Sort(keys)
		out = append(out, fmt.Sprintf("%s req=%s nz=%s ports=%d pods=%v", ni.Name(), ni.Requested(), ni.NonZeroRequested(), len(ni.UsedPorts()), keys))
	}
	return out
}

// unboundKeys lists the pods of objs a cache does not take.
func unboundKeys(objs load.Objects) []string {
	var out []string
	for _, p := range objs.Pods {
		if p.Spec.NodeName == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			out = append(out, p.Namespace+"/"+p.Name)
		}
	}
	return out
}

// checkReadCache: ReadCache (lean and full) holds what a cache fed Read's
// objects holds, returns the pods a cache does not take, and fails when
// Read fails, with no cache.
func checkReadCache(t *testing.T, in []byte, strict bool) {
	opts := load.Options{Strict: strict}
	objs, err := opts.Read(bytes.NewReader(in), "in")
	for _, mode := range [][]snapshot.CacheOption{nil, {snapshot.LeanPods()}} {
		c, rest, cerr := opts.ReadCache(bytes.NewReader(in), "in", mode...)
		if err != nil {
			require.Error(t, cerr, "Read fails, ReadCache does not")
			require.Nil(t, c)
			require.Equal(t, load.Objects{}, rest)
			continue
		}
		want, ferr := fedCache(t, objs)
		if ferr != nil {
			// The cache rejects an object: ReadCache says so, where.
			require.Error(t, cerr)
			require.Nil(t, c)
			continue
		}
		require.NoError(t, cerr)
		require.Equal(t, len(mode) > 0, c.LeanPods())
		require.Equal(t, cacheState(want), cacheState(c))
		var got []string
		for _, p := range rest.Pods {
			got = append(got, p.Namespace+"/"+p.Name)
		}
		require.Equal(t, unboundKeys(objs), got)
		require.Equal(t, objs.Skipped, rest.Skipped)
		require.Nil(t, rest.Nodes)
		require.Nil(t, rest.Others)
	}
}

func TestReadCacheFormats(t *testing.T) {
	bound := strings.Replace(podYAML, "spec:", "spec:\n  nodeName: n1", 1)
	for name, in := range map[string]string{
		"nodes and pods":      nodeYAML + "---\n" + podYAML + "---\n" + bound,
		"kubectl List":        kubectlOutput,
		"pod before its node": bound + "---\n" + nodeYAML,
		"JSON stream": `{"apiVersion":"v1","kind":"Node","metadata":{"name":"j1"}}` +
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"j1","containers":[{"name":"c","resources":{"requests":{"cpu":"1"}}}]}}`,
		"other kinds": "apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\n",
	} {
		t.Run(name, func(t *testing.T) { checkReadCache(t, []byte(in), false) })
	}
}

// A pod the cache rejects (it records a GPU its node does not have, in
// the openb schema given by WithDeviceDecoder) is an error saying where;
// nothing is returned. Read, which feeds no cache, accepts the input.
func TestReadCacheRejection(t *testing.T) {
	in := "apiVersion: v1\nkind: Node\nmetadata: {name: g1}\n" +
		"status: {allocatable: {cpu: '4', alibabacloud.com/gpu-count: '2', alibabacloud.com/gpu-milli: '2000'}}\n" +
		"---\napiVersion: v1\nkind: Pod\n" +
		"metadata: {name: gi, annotations: {alibabacloud.com/gpu-count: '1', alibabacloud.com/gpu-milli: '700', alibabacloud.com/gpu-index: '7'}}\n" +
		"spec: {nodeName: g1, containers: [{name: c, resources: {requests: {cpu: '1'}}}]}\n"
	_, err := load.Read(strings.NewReader(in), "in.yaml")
	require.NoError(t, err)
	c, rest, cerr := load.Options{}.ReadCache(strings.NewReader(in), "in.yaml", snapshot.LeanPods(), snapshot.WithDeviceDecoder(openb.Devices))
	require.Error(t, cerr)
	require.Nil(t, c)
	assert.Equal(t, load.Objects{}, rest)
	assert.ErrorIs(t, cerr, snapshot.ErrInvalidObject)
	assert.Equal(t, `in.yaml:6: document 2: Pod "default/gi": pod default/gi: records GPU device 7, node g1 has 2: snapshot: invalid object`, cerr.Error())

	// With the openb decoder, the same input without the bad index loads.
	c, _, err = load.Options{}.ReadCache(strings.NewReader(strings.Replace(in, "'7'", "'1'", 1)), "in.yaml", snapshot.LeanPods(), snapshot.WithDeviceDecoder(openb.Devices))
	require.NoError(t, err)
	assert.Equal(t, int64(300), c.Snapshot().Node(0).Devices()[1].FreeMilliGPU, "device 1: 1000 - 700")
}

func TestFilesCacheRealData(t *testing.T) {
	dir := dataDir(t, "openshift-insights-archive-sample")
	openb := filepath.Join(dataDir(t, "alibaba-clusterdata-gpu-v2023"), "node_yaml", "openb_node_list_gpu_node.yaml")
	for _, paths := range [][]string{{filepath.Join(dir, "node"), filepath.Join(dir, "pod")}, {openb}} {
		objs, err := load.Files(paths...)
		require.NoError(t, err)
		want, err := fedCache(t, objs)
		require.NoError(t, err)
		c, rest, err := load.Options{}.FilesCache(paths, snapshot.LeanPods())
		require.NoError(t, err)
		require.Equal(t, cacheState(want), cacheState(c))
		require.Equal(t, want.NumNodes(), c.NumNodes())
		require.Equal(t, unboundKeys(objs), func() []string {
			var out []string
			for _, p := range rest.Pods {
				out = append(out, p.Namespace+"/"+p.Name)
			}
			return out
		}())
		for _, ni := range c.Snapshot().Nodes() {
			for _, p := range ni.Pods() {
				require.False(t, p.Retained(), "pod %s kept whole", p.Key())
			}
		}
	}
	_, _, err := load.Options{}.FilesCache([]string{filepath.Join(dir, "no-such-dir")})
	require.ErrorIs(t, err, load.ErrIO)
}

func FuzzReadCache(f *testing.F) {
	for _, seed := range []string{
		"",
		nodeYAML + "---\n" + podYAML,
		kubectlOutput,
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"j1"}}{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"nodeName":"j1"}}`,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {nodeName: n, containers: [{name: c, resources: {requests: {cpu: -1}}}]}\n",
		"{apiVersion: v1, kind: Node, metadata: {name: f1}}\n",
		nodeYAML + "---oops\n" + podYAML,
		"apiVersion: v1\nkind: Namespace\nmetadata: {name: Bad_NS}\n",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	for _, tt := range trailingInputs {
		f.Add([]byte(tt.in), false)
	}
	f.Fuzz(checkReadCache)
}

// spyDecoder records how many bytes of the input had been read when each
// node reached the cache.
type spyDecoder struct {
	snapshot.DeviceDecoder
	read *int
	at   []int
}

func (s *spyDecoder) NodeDevices(n *v1.Node, alloc *snapshot.Vector) []snapshot.Device {
	s.at = append(s.at, *s.read)
	return s.DeviceDecoder.NodeDevices(n, alloc)
}

// TestReadCacheStreams: ReadCache feeds each node to the cache after
// reading about that much of the input, not the whole input (YAML and
// JSON, 5,000 nodes, ~0.8 MB): before, the input was read whole
// (io.ReadAll) before the first object.
func TestReadCacheStreams(t *testing.T) {
	const nodes = 5000
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			var b strings.Builder
			for i := range nodes {
				if format == "yaml" {
					fmt.Fprintf(&b, "apiVersion: v1\nkind: Node\nmetadata: {name: n%d}\nstatus: {allocatable: {cpu: '4', memory: 8Gi}}\n---\n", i)
				} else {
					fmt.Fprintf(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n%d\"},\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\"}}}\n", i)
				}
			}
			in := b.String()
			cr := &load.CountingReader{R: strings.NewReader(in)}
			spy := &spyDecoder{DeviceDecoder: snapshot.NvidiaDevices, read: &cr.N}
			c, _, err := load.Options{}.ReadCache(cr, "in", snapshot.WithDeviceDecoder(spy))
			require.NoError(t, err)
			require.Equal(t, nodes, c.NumNodes())
			require.Len(t, spy.at, nodes)
			per := len(in) / nodes
			for i, n := range spy.at {
				require.LessOrEqual(t, n, (i+2)*per+256<<10, "node %d fed after reading %d of %d bytes", i, n, len(in))
			}
		})
	}
}
