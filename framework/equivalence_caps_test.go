package framework

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/load/openb"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// capsCluster is a fork of nb blocks of random nodes (fbNode), about half
// of the blocks made of one node drawn nb times (so that a whole block
// can fail a pod for one reason), with random pods bound.
func capsCluster(t *testing.T, rng *rand.Rand, nb int) *snapshot.Fork {
	var nodes []*v1.Node
	for b := range nb {
		same := rng.IntN(2) == 0
		seed := rng.Uint64()
		for j := range layout.BlockSize - rng.IntN(2)*rng.IntN(layout.BlockSize) {
			r := rng
			if same {
				r = rand.New(rand.NewPCG(seed, 1))
			}
			nodes = append(nodes, fbNode(r, fmt.Sprintf("b%d-n%d", b, j)))
		}
	}
	f := snapshottest.SnapshotWithDevices(t, openb.Devices, nodes).Fork()
	for i := range 4 * len(nodes) {
		_ = f.AddPod(fbPod(rng, fmt.Sprintf("bound%d", i)), nodes[rng.IntN(len(nodes))].Name)
	}
	return f
}

// capsPod is fbPod with requests drawn so that some blocks are full for
// it: whole GPUs, large shares, several devices, large cpu or memory.
func capsPod(rng *rand.Rand, name string) *v1.Pod {
	p := fbPod(rng, name)
	switch rng.IntN(4) {
	case 0:
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[openb.AnnotationGPUCount] = fmt.Sprint(1 + rng.IntN(5))
		p.Annotations[openb.AnnotationGPUMilli] = "1000"
	case 1:
		p = snapshottest.MakePod(name).Req("cpu", fmt.Sprint(1+rng.IntN(16)), "memory", fmt.Sprintf("%dGi", 1+rng.IntN(64))).Obj()
	}
	return p
}

// preparedFilters returns pod's prepared filters of s (s.pfs after fuse
// if fused).
func preparedFilters(t *testing.T, s *Scheduler, pod *snapshot.PodInfo, f *snapshot.Fork, fused bool) []PodFilter {
	s.pfs, s.pfNames = s.pfs[:0], s.pfNames[:0]
	for _, fl := range s.filters {
		res, err := RunPreFilter(fl, pod, f)
		require.NoError(t, err)
		if res.Filter != nil {
			s.pfs, s.pfNames = append(s.pfs, res.Filter), append(s.pfNames, fl.Name())
		}
	}
	if fused {
		s.fuse()
	}
	return append([]PodFilter(nil), s.pfs...)
}

// TestBlockCapsRejectOnlyInfeasible: a block that a class's block test
// rejects has no node the class's filters pass (fused or not; checked
// with the filters themselves and with their plain references), the test
// rejects blocks of every kind (full, unschedulable, without devices,
// without an allowed model), and a table kept up to date across pods
// added and removed equals one built from scratch.
func TestBlockCapsRejectOnlyInfeasible(t *testing.T) {
	refs := []func(*snapshot.PodInfo, *snapshot.NodeInfo, []Reason) []Reason{refUnschedulable, refTaints, refFit, refGPU}
	rejected, blocks, nodesRejected := 0, 0, 0
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 11))
		f := capsCluster(t, rng, 2+rng.IntN(4))
		filters := append(DefaultFilters(), gpuDevicesPlugin{})
		if seed%3 == 1 {
			filters = []Filter{gpuDevicesPlugin{}, &nodeResourcesFitPlugin{}, nodeUnschedulablePlugin{}} // not fused
		}
		s := mustNew(t, Config{Filters: filters})
		var table capsTable
		vc, ok := nodeview.ViewOf(f)
		require.True(t, ok)
		for i := range 60 {
			// Change a few nodes: the table must follow.
			for range rng.IntN(3) {
				ni := f.Node(rng.IntN(f.NumNodes()))
				if pods := ni.Pods(); len(pods) > 0 && rng.IntN(2) == 0 {
					require.NoError(t, f.RemovePod(pods[0].Key(), ni.Name()))
				} else {
					_ = f.AddPod(fbPod(rng, fmt.Sprintf("more%d-%d", seed, i)), ni.Name())
				}
			}
			var fresh capsTable
			pod := openb.MustPodInfo(capsPod(rng, fmt.Sprintf("p%d", i)))
			pfs := preparedFilters(t, s, pod, f, seed%3 != 1)
			need := needOf(pfs)
			for b := range vc.NumBlocks() {
				bc, own := table.block(vc, b)
				fbc, fown := fresh.block(vc, b)
				require.Equal(t, *fbc, *bc, "seed %d pod %d block %d: kept up to date", seed, i, b)
				require.Equal(t, fown, own, "seed %d pod %d block %d: nodes kept up to date", seed, i, b)
				blocks++
				nodes, _ := vc.Block(b)
				for j, ni := range nodes {
					if need.rejects(&own[j]) {
						nodesRejected++
						_, fits := fitsAll(pfs, ni, nil)
						require.False(t, fits, "seed %d pod %d: node %s's own capacities reject it, but it passes the filters", seed, i, ni.Name())
					}
				}
				if !need.rejects(bc) {
					continue
				}
				rejected++
				for _, ni := range nodes {
					_, fits := fitsAll(pfs, ni, nil)
					require.False(t, fits, "seed %d pod %d block %d: node %s passes the filters", seed, i, b, ni.Name())
					var reasons []Reason
					for _, ref := range refs {
						reasons = ref(pod, ni, reasons)
					}
					require.NotEmpty(t, reasons, "seed %d pod %d block %d: node %s passes the reference filters", seed, i, b, ni.Name())
				}
			}
		}
	}
	t.Logf("%d of %d blocks rejected, %d nodes by their own capacities", rejected, blocks, nodesRejected)
	require.Greater(t, nodesRejected, 0)
	require.Greater(t, rejected, blocks/10, "the block test rejects too rarely to be tested")
}

// TestBlockNeedKinds: each of the block test's checks rejects a block
// that fails it alone, and lets through a block where one node passes.
func TestBlockNeedKinds(t *testing.T) {
	open := blockCaps{cpu: 4000, memory: 8 << 30, pods: 3, gpuFree: [4]uint16{1000, 1000, 500, 0},
		models: 1 << 5, devices: true, schedulable: true}
	for _, tc := range []struct {
		name string
		need blockNeed
		mod  func(*blockCaps)
	}{
		{"unschedulable", blockNeed{unschedulable: true}, func(c *blockCaps) { c.schedulable = false }},
		// 1 > free pods 0 on every node.
		{"pods", blockNeed{fit: true}, func(c *blockCaps) { c.pods = 0 }},
		{"cpu", blockNeed{fit: true, cpu: 4001}, nil},
		{"memory", blockNeed{fit: true, memory: 8<<30 + 1}, nil},
		// Two devices with 1000 free: GPUFree[1] = 1000 < 1001.
		{"gpu share", blockNeed{gpu: true, gpuSlot: 1, milliGPU: 1001}, nil},
		// Four devices of 1000: GPUFree[3] = 0.
		{"gpu count", blockNeed{gpu: true, gpuSlot: 3, milliGPU: 1000}, nil},
		{"gpu model", blockNeed{gpu: true, milliGPU: 1, constrained: true, models: 1 << 6}, nil},
		{"no devices", blockNeed{gpu: true, milliGPU: 1}, func(c *blockCaps) { c.devices, c.deviceless, c.gpuFree, c.models = false, true, [4]uint16{}, 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bc := open
			if tc.mod != nil {
				tc.mod(&bc)
			}
			require.True(t, tc.need.rejects(&bc))
			require.False(t, tc.need.rejects(&open) && tc.mod != nil, "rejects the open block")
		})
	}
	// A block with a device-less node does not reject a pod that may pass
	// there (a whole-GPU nvidia.com/gpu request on a scalar-accounted node).
	nd := blockNeed{gpu: true, milliGPU: 1000, deviceless: true}
	require.False(t, nd.rejects(&blockCaps{deviceless: true, schedulable: true}))
	require.False(t, (&blockNeed{fit: true}).rejects(&open), "pods: 1 <= 3 free")
	require.False(t, (&blockNeed{fit: true, cpu: 4000, memory: 8 << 30}).rejects(&open), "exactly the free amounts fit")
	require.False(t, (&blockNeed{gpu: true, gpuSlot: 1, milliGPU: 1000}).rejects(&open), "two devices with 1000 free")
}

// TestEquivalenceCacheGPUBlocks: on GPU clusters of several blocks filled
// until most blocks are full for most classes, the cached cycle (block
// tests shared by every class) decides exactly as the uncached reference,
// at percentages 100, adaptive and 30; the block test did reject blocks.
func TestEquivalenceCacheGPUBlocks(t *testing.T) {
	n := uint64(12)
	if testing.Short() {
		n = 4
	}
	var served uint64
	for seed := range n {
		for _, pct := range []int32{100, 0, 30} {
			t.Run(fmt.Sprintf("seed=%d/pct=%d", seed, pct), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(seed, 13))
				f := capsCluster(t, rng, 2+rng.IntN(4))
				filters := append(DefaultFilters(), NewGPUDevices())
				cfg := Config{Filters: filters, PercentageOfNodesToScore: pct, Seed: seed, DeviceChooser: gpushare.BestFit{}}
				cached := mustNew(t, cfg)
				ref := mustNew(t, opaque(t, cfg))
				var templates []*v1.Pod
				for i := range 12 {
					templates = append(templates, capsPod(rng, fmt.Sprintf("t%d", i)))
				}
				rejectedSeen := false
				for step := range 600 {
					tpl := templates[rng.IntN(len(templates))]
					p := tpl.DeepCopy()
					p.Name = fmt.Sprintf("%s-%d", tpl.Name, step)
					pi := openb.MustPodInfo(p)
					dr, errR := ref.SchedulePod(f, pi)
					d, err := cached.SchedulePod(f, pi)
					require.Equal(t, errR, err)
					require.Equal(t, outcomeOf(dr), outcomeOf(d), "seed %d step %d pod %s", seed, step, p.Name)
					if dr.Scheduled() {
						require.NoError(t, f.AddPodInfo(dr.Pod, dr.Node))
					}
					if !rejectedSeen {
						vc, _ := nodeview.ViewOf(f)
						for _, e := range cached.classes.entries {
							for b := range vc.NumBlocks() {
								if e.ready && !e.shaped && e.need.rejects(first(cached.classes.caps.block(vc, b))) {
									rejectedSeen = true
								}
							}
						}
					}
				}
				require.True(t, rejectedSeen, "no class's block test rejected a block")
				served += cached.EquivalenceStats().Cached
			})
		}
	}
	require.NotZero(t, served, "no cycle was served from the cache")
}

func first[A, B any](a A, _ B) A { return a }
