package snapshot_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// refModel is the deliberately simple reference: maps of nodes and pods,
// totals recomputed from scratch on every read.
type refModel struct {
	nodes map[string]*v1.Node
	pods  map[string]map[snapshot.PodKey]*v1.Pod // node -> pods
}

func newRef() *refModel {
	return &refModel{nodes: map[string]*v1.Node{}, pods: map[string]map[snapshot.PodKey]*v1.Pod{}}
}

func (r *refModel) clone() *refModel {
	c := newRef()
	for k, v := range r.nodes {
		c.nodes[k] = v
	}
	for k, m := range r.pods {
		cm := map[snapshot.PodKey]*v1.Pod{}
		for pk, p := range m {
			cm[pk] = p
		}
		c.pods[k] = cm
	}
	return c
}

// nodeView is a comparable summary of one node.
type nodeView struct {
	Name                 string
	AllocCPU, AllocMem   int64
	ReqCPU, ReqMem, ReqG int64
	NZCPU, NZMem         int64
	Pods                 []string
	Ports                int
	GPUFree              int64 // sum over devices of free milli-GPU
}

func (r *refModel) view() map[string]nodeView {
	out := map[string]nodeView{}
	gpu, _ := snapshot.Intern("example.com/gpu")
	for name, n := range r.nodes {
		alloc, _ := snapshot.NewVector(n.Status.Allocatable)
		v := nodeView{Name: name, AllocCPU: alloc.MilliCPU(), AllocMem: alloc.Memory(), GPUFree: 4000}
		for k, p := range r.pods[name] {
			if p.Annotations[openb.AnnotationGPUCount] == "1" {
				v.GPUFree -= 300
			} else if p.Annotations[openb.AnnotationGPUCount] == "2" {
				v.GPUFree -= 2000
			}
			req, err := snapshot.ComputePodRequests(p)
			if err != nil {
				panic(err)
			}
			v.ReqCPU += req.Requested.MilliCPU()
			v.ReqMem += req.Requested.Memory()
			v.ReqG += req.Requested.Get(gpu)
			v.NZCPU += req.NonZeroMilliCPU
			v.NZMem += req.NonZeroMemory
			v.Pods = append(v.Pods, k.String())
			for _, c := range p.Spec.Containers {
				for _, cp := range c.Ports {
					if cp.HostPort > 0 {
						v.Ports++
					}
				}
			}
		}
		sort.Strings(v.Pods)
		out[name] = v
	}
	return out
}

type reader interface {
	NumNodes() int
	Node(int) *snapshot.NodeInfo
	Get(string) *snapshot.NodeInfo
	Index(string) (int, bool)
}

func viewOf(t *testing.T, s reader) map[string]nodeView {
	t.Helper()
	gpu, _ := snapshot.Intern("example.com/gpu")
	out := map[string]nodeView{}
	for i := range s.NumNodes() {
		ni := s.Node(i)
		j, ok := s.Index(ni.Name())
		require.True(t, ok && i == j, "Index(%s) = %d, %v; want %d", ni.Name(), j, ok, i)
		require.Same(t, ni, s.Get(ni.Name()))
		v := nodeView{
			Name: ni.Name(), AllocCPU: ni.Allocatable().MilliCPU(), AllocMem: ni.Allocatable().Memory(),
			ReqCPU: ni.Requested().MilliCPU(), ReqMem: ni.Requested().Memory(), ReqG: ni.Requested().Get(gpu),
			NZCPU: ni.NonZeroRequested().MilliCPU(), NZMem: ni.NonZeroRequested().Memory(),
			Ports: len(ni.UsedPorts()),
		}
		// The CPUMemory block repeats the vectors, with upstream's
		// fraction computed the plain way.
		frac := func(req, alloc int64) float64 {
			if alloc <= 0 {
				return 0
			}
			return min(1, float64(req)/float64(alloc))
		}
		std := math.Abs((frac(v.ReqCPU, v.AllocCPU) - frac(v.ReqMem, v.AllocMem)) / 2)
		require.Equal(t, layout.CPUMemory{
			Allocatable:      [2]int64{v.AllocCPU, v.AllocMem},
			Requested:        [2]int64{v.ReqCPU, v.ReqMem},
			NonZeroRequested: [2]int64{v.NZCPU, v.NZMem},
			Balance:          int64((1 - std) * 100),
			Hostname:         hostnameOf(ni.Node()),
		}, *nodeview.CPUMemory(ni), "node %s", v.Name)
		for _, d := range ni.Devices() {
			v.GPUFree += d.FreeMilliGPU
		}
		for _, p := range ni.Pods() {
			v.Pods = append(v.Pods, p.Key().String())
		}
		sort.Strings(v.Pods)
		_, dup := out[v.Name]
		require.False(t, dup, "node %s listed twice", v.Name)
		out[v.Name] = v
	}
	return out
}

// op is one random change applied both to a Fork and to the reference.
type op struct {
	kind int // 0 add node, 1 remove node, 2 add pod, 3 remove pod, 4 update node
	node string
	pod  *v1.Pod
	cpu  int64
}

func randomOp(rng *rand.Rand, ref *refModel, seq int) op {
	names := make([]string, 0, len(ref.nodes))
	for n := range ref.nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	k := rng.IntN(10)
	switch {
	case k == 0 || len(names) == 0:
		return op{kind: 0, node: fmt.Sprintf("n%d", rng.IntN(40)), cpu: int64(1+rng.IntN(16)) * 1000}
	case k == 1:
		return op{kind: 1, node: names[rng.IntN(len(names))]}
	case k == 2:
		return op{kind: 4, node: names[rng.IntN(len(names))], cpu: int64(1+rng.IntN(16)) * 1000}
	case k <= 6:
		w := st.MakePod(fmt.Sprintf("p%d", seq)).Req("cpu", fmt.Sprintf("%dm", rng.IntN(2000)), "example.com/gpu", fmt.Sprint(rng.IntN(2)))
		if rng.IntN(3) == 0 {
			w = w.Req() // a container without requests: non-zero defaults
		}
		if rng.IntN(4) == 0 {
			w = w.HostPort("", int32(8000+rng.IntN(4)))
		}
		if rng.IntN(4) == 0 {
			w = w.Sidecar("cpu", "50m", "memory", "10Mi")
		}
		switch rng.IntN(6) {
		case 0:
			w = w.Annotation(openb.AnnotationGPUCount, "1").Annotation(openb.AnnotationGPUMilli, "300").Annotation(openb.AnnotationGPUIndex, "0")
		case 1:
			w = w.Annotation(openb.AnnotationGPUCount, "2").Annotation(openb.AnnotationGPUMilli, "1000").Annotation(openb.AnnotationGPUIndex, "2-3")
		}
		return op{kind: 2, node: names[rng.IntN(len(names))], pod: w.Obj()}
	default:
		n := names[rng.IntN(len(names))]
		keys := make([]snapshot.PodKey, 0)
		for pk := range ref.pods[n] {
			keys = append(keys, pk)
		}
		if len(keys) == 0 {
			return op{kind: 2, node: n, pod: st.MakePod(fmt.Sprintf("p%d", seq)).Req("cpu", "10m").Obj()}
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i].Name < keys[j].Name })
		return op{kind: 3, node: n, pod: &v1.Pod{ObjectMeta: metav1ObjectMeta(keys[rng.IntN(len(keys))])}}
	}
}

// node builds node name with cpu milli-CPU; its hostname label (which
// the CPUMemory block repeats) follows cpu, so that an update can add,
// change or drop it: the name, another value, or none.
func node(name string, cpu int64) *v1.Node {
	n := st.MakeNode(name).Capacity("cpu", fmt.Sprintf("%dm", cpu), "memory", "64Gi", "pods", "110", "example.com/gpu", "4",
		"alibabacloud.com/gpu-count", "4", "alibabacloud.com/gpu-milli", "4000").
		Image(100<<20, "img-"+name[len(name)-1:]).Label("zone", fmt.Sprint("z", cpu%3000)).Obj()
	switch cpu / 1000 % 3 {
	case 1:
		n.Labels[v1.LabelHostname] = "h-" + name
	case 2:
		delete(n.Labels, v1.LabelHostname)
	}
	return n
}

// hostnameOf is the handle of nd's hostname label, the zero handle
// without one.
func hostnameOf(nd *v1.Node) unique.Handle[string] {
	if v, ok := nd.Labels[v1.LabelHostname]; ok {
		return unique.Make(v)
	}
	return unique.Handle[string]{}
}

// applyFork applies o to f and ref; both must agree on success.
func applyFork(t *testing.T, f *snapshot.Fork, ref *refModel, o op) {
	t.Helper()
	var err error
	var refOK bool
	switch o.kind {
	case 0:
		_, exists := ref.nodes[o.node]
		err = f.AddNode(node(o.node, o.cpu))
		refOK = !exists
		if refOK {
			ref.nodes[o.node] = node(o.node, o.cpu)
		}
	case 1:
		err = f.RemoveNode(o.node)
		refOK = true
		delete(ref.nodes, o.node)
		delete(ref.pods, o.node)
	case 4:
		err = f.UpdateNode(node(o.node, o.cpu))
		refOK = true
		ref.nodes[o.node] = node(o.node, o.cpu)
	case 2:
		err = f.AddPod(o.pod, o.node)
		refOK = true
		if ref.pods[o.node] == nil {
			ref.pods[o.node] = map[snapshot.PodKey]*v1.Pod{}
		}
		ref.pods[o.node][snapshot.KeyOf(o.pod)] = o.pod
	case 3:
		err = f.RemovePod(snapshot.KeyOf(o.pod), o.node)
		refOK = true
		delete(ref.pods[o.node], snapshot.KeyOf(o.pod))
	}
	if refOK {
		require.NoError(t, err, "op %+v", o)
	} else {
		require.Error(t, err, "op %+v", o)
	}
}

// applyCache applies the same op to a cache (pods carry spec.nodeName).
func applyCache(t *testing.T, c *snapshot.Cache, o op) {
	t.Helper()
	switch o.kind {
	case 0:
		if c.Snapshot().Get(o.node) == nil {
			require.NoError(t, c.AddNode(node(o.node, o.cpu)))
		}
	case 1:
		snap := c.Snapshot()
		for _, p := range snap.Get(o.node).Pods() {
			c.RemovePod(p.Key())
		}
		require.NoError(t, c.RemoveNode(o.node))
	case 4:
		require.NoError(t, c.UpdateNode(node(o.node, o.cpu)))
	case 2:
		p := o.pod.DeepCopy()
		p.Spec.NodeName = o.node
		require.NoError(t, c.AddPod(p))
	case 3:
		c.RemovePod(snapshot.KeyOf(o.pod))
	}
}

func seedCache(t *testing.T, rng *rand.Rand) (*snapshot.Cache, *refModel) {
	c := snapshot.NewCacheWithDevices(openb.Devices)
	ref := newRef()
	for i := range 5 + rng.IntN(100) {
		name := fmt.Sprintf("n%d", i)
		n := node(name, int64(4+rng.IntN(8))*1000)
		require.NoError(t, c.AddNode(n))
		ref.nodes[name] = n
		ref.pods[name] = map[snapshot.PodKey]*v1.Pod{}
		for j := range rng.IntN(4) {
			p := st.MakePod(fmt.Sprintf("b%d-%d", i, j)).Req("cpu", "100m", "memory", "1Gi").Node(name).Obj()
			require.NoError(t, c.AddPod(p))
			ref.pods[name][snapshot.KeyOf(p)] = p
		}
	}
	return c, ref
}

// checkForkInvariants runs random changes in nested forks and checks,
// against the reference, that Revert restores exactly and that Commit
// equals applying the changes to a fresh cache.
func checkForkInvariants(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	cache, ref := seedCache(t, rng)
	base := cache.Snapshot()
	before := viewOf(t, base)
	require.Equal(t, ref.view(), before)

	f := base.Fork()
	vl := newVersionLog()
	vl.check(t, base, "base")
	seq := 0
	type frozen struct {
		snap *snapshot.Snapshot
		view map[string]nodeView
	}
	var mids []frozen
	// layer opens a layer, applies random changes with, up to depth 3,
	// maybe a nested layer among them, maybe takes a snapshot, then
	// reverts or commits, checking both against the reference; it returns
	// the changes kept. Reverted layers' copies are reused by later
	// layers, so every snapshot taken is re-checked at the end.
	var layer func(round, depth int) []op
	layer = func(round, depth int) []op {
		refBefore := ref.clone()
		forkBefore := viewOf(t, f)
		f.Fork()
		require.Equal(t, depth, f.Depth())
		var ops []op
		apply := func(k int) {
			for range k {
				seq++
				o := randomOp(rng, ref, seq)
				ops = append(ops, o)
				applyFork(t, f, ref, o)
				vl.check(t, f, fmt.Sprintf("round %d depth %d op %+v", round, depth, o))
			}
		}
		apply(1 + rng.IntN(30))
		if depth < 3 && rng.IntN(2) == 0 {
			ops = append(ops, layer(round, depth+1)...)
			apply(rng.IntN(10))
		}
		if rng.IntN(2) == 0 {
			mid := f.Snapshot()
			mids = append(mids, frozen{mid, viewOf(t, mid)})
		}
		midView := viewOf(t, f)
		require.Equal(t, ref.view(), midView, "round %d depth %d: fork disagrees with the reference", round, depth)
		if rng.IntN(2) == 0 {
			require.NoError(t, f.Revert())
			ref = refBefore
			require.Equal(t, forkBefore, viewOf(t, f), "round %d depth %d: Revert did not restore", round, depth)
			vl.check(t, f, fmt.Sprintf("round %d depth %d after Revert", round, depth))
			return nil
		}
		require.NoError(t, f.Commit())
		require.Equal(t, midView, viewOf(t, f), "round %d depth %d: Commit lost changes", round, depth)
		return ops
	}
	for round := range 8 {
		// Changes at the current layer first, so that it owns objects the
		// nested layer must not change in place.
		for range rng.IntN(5) {
			seq++
			o := randomOp(rng, ref, seq)
			applyFork(t, f, ref, o)
			applyCache(t, cache, o)
		}
		for _, o := range layer(round, 1) {
			applyCache(t, cache, o)
		}
		require.Equal(t, viewOf(t, f), viewOf(t, cache.Snapshot()), "round %d: Commit != same changes on a cache", round)
		vl.check(t, f, fmt.Sprintf("round %d after Commit", round))
		vl.check(t, cache.Snapshot(), fmt.Sprintf("round %d cache", round))
	}
	// A snapshot taken mid-way never changes afterwards.
	for i, m := range mids {
		require.Equal(t, m.view, viewOf(t, m.snap), "snapshot %d changed", i)
		vl.check(t, m.snap, fmt.Sprintf("snapshot %d at the end", i))
	}
	require.ErrorIs(t, f.Revert(), snapshot.ErrNoFork)
	// The base snapshot never changed.
	require.Equal(t, before, viewOf(t, base))
}

func TestForkInvariants(t *testing.T) {
	for seed := range uint64(200) {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) { checkForkInvariants(t, seed) })
	}
}

func FuzzForkInvariants(f *testing.F) {
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) { checkForkInvariants(t, seed) })
}
