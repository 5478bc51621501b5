package gpushare

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var models = []string{"T4", "V100M16", "G2"}

func randomNode(r *rand.Rand) NodeState {
	n := NodeState{FreeMilliCPU: r.Int64N(100000) - 2000, FreeMemory: r.Int64N(1 << 36)}
	nd := r.IntN(10)
	for range nd {
		cp := []int64{0, 1000, 1000, 1000, 2000}[r.IntN(5)]
		free := int64(0)
		if cp > 0 {
			free = []int64{0, cp, r.Int64N(cp + 1)}[r.IntN(3)]
		}
		n.Devices = append(n.Devices, Device{Model: models[r.IntN(len(models))], CapacityMilliGPU: cp, FreeMilliGPU: free})
	}
	if r.IntN(4) == 0 {
		n.ResidentClasses = ClassSet(r.Uint64() & 0x1ff)
	}
	return n
}

func randomTask(r *rand.Rand) Task {
	t := Task{MilliCPU: r.Int64N(40000), Memory: r.Int64N(1 << 34)}
	switch r.IntN(4) {
	case 0: // CPU-only
	case 1:
		t.GPUCount, t.MilliGPU = 1, 1+r.Int64N(999)
	default:
		t.GPUCount, t.MilliGPU = 1+r.IntN(10), 1000
	}
	if r.IntN(3) == 0 {
		t.Models = []string{models[r.IntN(len(models))], ""}
	}
	return t
}

func randomWorkload(r *rand.Rand) *Workload {
	k := 1 + r.IntN(8)
	shapes := make([]Task, k)
	weights := make([]float64, k)
	for i := range shapes {
		shapes[i] = randomTask(r)
		weights[i] = r.Float64() + 0.01
	}
	return mustWorkload(shapes, weights)
}

// refFragmentation is a deliberately plain implementation of the measure.
func refFragmentation(w *Workload, n *NodeState) float64 {
	var total int64
	for _, d := range n.Devices {
		total += d.FreeMilliGPU
	}
	var sum float64
	for i := 0; i < w.Len(); i++ {
		s, p := w.Shape(i)
		if !s.UsesGPU() {
			sum += p * float64(total)
			continue
		}
		var usable int
		var unusable int64
		for _, d := range n.Devices {
			if s.Allows(d.Model) && d.FreeMilliGPU >= s.MilliGPU {
				usable++
			} else {
				unusable += d.FreeMilliGPU
			}
		}
		if usable >= s.GPUCount && n.FreeMilliCPU >= s.MilliCPU {
			sum += p * float64(unusable)
		} else {
			sum += p * float64(total)
		}
	}
	return sum
}

func clone(n NodeState) NodeState {
	n.Devices = slices.Clone(n.Devices)
	return n
}

func TestPropertyFragmentation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		w := randomWorkload(r)
		n := randomNode(r)
		got := w.Fragmentation(&n)
		want := refFragmentation(w, &n)
		require.InDelta(t, want, got, 1e-9*(1+math.Abs(want)), "case %d: Fragmentation = %v, reference %v", i, got, want)
		free := float64(n.FreeMilliGPU())
		require.True(t, got >= 0 && got <= free*(1+1e-12), "case %d: fragmentation %v outside [0, %v]", i, got, free)
	}
}

func TestPropertyScoresAndDecisions(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 400 {
		w := randomWorkload(r)
		fgd := NewFGD(w)
		scorers := []NodeScorer{fgd, BestFit{}, DotProduct{}, GPUPacking{}, GPUClustering{}}
		nodes := make([]NodeState, 1+r.IntN(12))
		for k := range nodes {
			nodes[k] = randomNode(r)
		}
		task := randomTask(r)
		for k := range nodes {
			fits := Fits(&nodes[k], task)
			for _, s := range scorers {
				score, devs := s.Score(&nodes[k], task)
				require.True(t, score >= 0 && score <= MaxScore, "case %d %s: score %d", i, s.Name(), score)
				if !fits {
					require.Equal(t, DeviceSet(0), devs, "case %d %s", i, s.Name())
					require.Equal(t, int64(0), score, "case %d %s", i, s.Name())
					continue
				}
				c := clone(nodes[k])
				require.NoError(t, c.Place(task, devs), "case %d %s: devices %v", i, s.Name(), devs.AppendIndexes(nil))
			}
			if fits {
				// FGD's score is the sigmoid of the measured decrease.
				score, devs := fgd.Score(&nodes[k], task)
				c := clone(nodes[k])
				require.NoError(t, c.Place(task, devs))
				assert.Equal(t, fgdScore(w.Fragmentation(&nodes[k])-w.Fragmentation(&c)), score, "case %d", i)
			}
		}
		policies := []Policy{fgd, BestFit{}, DotProduct{}, GPUPacking{}, GPUClustering{}, NewRandom(uint64(i))}
		anyFits := slices.ContainsFunc(nodes, func(n NodeState) bool { return Fits(&n, task) })
		for _, p := range policies {
			d := p.Choose(nodes, task)
			if !anyFits {
				require.Equal(t, -1, d.Node, "case %d %s", i, p.Name())
				continue
			}
			require.GreaterOrEqual(t, d.Node, 0, "case %d %s", i, p.Name())
			c := clone(nodes[d.Node])
			require.NoError(t, c.Place(task, d.Devices), "case %d %s", i, p.Name())
			if s, ok := p.(NodeScorer); ok {
				for k := range nodes {
					if Fits(&nodes[k], task) {
						sk, _ := s.Score(&nodes[k], task)
						require.LessOrEqual(t, sk, d.Score, "case %d %s: node %d scores higher", i, p.Name(), k)
						if sk == d.Score {
							require.GreaterOrEqual(t, k, d.Node, "case %d %s: tie not to lowest index", i, p.Name())
						}
					}
				}
			}
		}
		var sum float64
		for k := range nodes {
			sum += w.Fragmentation(&nodes[k])
		}
		require.InDelta(t, sum, w.ClusterFragmentation(nodes), 1e-6)
		ratio := w.FragmentationRatio(nodes)
		require.True(t, ratio >= 0 && ratio <= 1, "ratio %v", ratio)
	}
}

// The incremental fragmentation after a tentative placement (nodeFits,
// FGD.Score) is bit for bit split on the placed view, for any take and
// share, including nodes too large for exact adjustment and workloads with
// more shapes than nodeFits keeps (both recompute).
func TestPropertyFragmentAfterExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 3000 {
		w := randomWorkload(r)
		if i%100 == 0 {
			shapes := make([]Task, maxFitShapes+1+r.IntN(3))
			weights := make([]float64, len(shapes))
			for k := range shapes {
				shapes[k], weights[k] = randomTask(r), r.Float64()+0.01
			}
			w = mustWorkload(shapes, weights)
		}
		n := randomNode(r)
		if i%10 == 0 && len(n.Devices) > 0 {
			n.Devices[r.IntN(len(n.Devices))].FreeMilliGPU = []int64{exactBound, exactBound + 1, math.MaxInt64, -exactBound - 1}[r.IntN(4)]
		}
		var nf nodeFits
		before := w.fitsOf(&n, &nf)
		v := newView(&n, 0, 0, 0)
		b := w.split(&n, &v)
		require.Equal(t, math.Float64bits(b.fragment()), math.Float64bits(before), "case %d: before", i)
		for range 5 {
			cpu := r.Int64N(50000) - 1000
			take := DeviceSet(r.Uint64() & (1<<(len(n.Devices)+1) - 1)) // sometimes a device the node lacks
			milli := []int64{0, 1 + r.Int64N(1000), 1000, exactBound + 1}[r.IntN(4)]
			v := newView(&n, cpu, take, milli)
			b := w.split(&n, &v)
			got := w.fragmentAfter(&nf, cpu, take, milli)
			require.Equal(t, math.Float64bits(b.fragment()), math.Float64bits(got), "case %d: take %v milli %d cpu %d", i, take.AppendIndexes(nil), milli, cpu)
		}
	}
}

func FuzzScore(f *testing.F) {
	f.Add(int64(32000), int64(1000), int64(600), int64(1000), int64(1000), int64(4000), int64(500), 1, uint8(0))
	f.Add(int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), 0, uint8(3))
	f.Add(int64(-1), int64(-5), int64(2000), int64(0), int64(-1), int64(-1), int64(1000), 9, uint8(7))
	f.Fuzz(func(t *testing.T, cpu, f0, f1, f2, capacity, tcpu, tmilli int64, tcount int, flags uint8) {
		n := NodeState{FreeMilliCPU: cpu, FreeMemory: 1 << 30, ResidentClasses: ClassSet(flags)}
		for i, f := range []int64{f0, f1, f2} {
			if flags&(1<<i) == 0 {
				n.Devices = append(n.Devices, Device{Model: models[i], CapacityMilliGPU: capacity, FreeMilliGPU: f})
			}
		}
		task := Task{MilliCPU: tcpu, GPUCount: tcount, MilliGPU: tmilli}
		if flags&8 != 0 {
			task.Models = []string{"T4"}
		}
		w := mustWorkload([]Task{shared(1000, 500), whole(4000, 2), cpuOnly(2000)}, []float64{1, 1, 1})
		frag := w.Fragmentation(&n)
		if math.IsNaN(frag) || math.IsInf(frag, 0) {
			t.Fatalf("Fragmentation = %v", frag)
		}
		for _, s := range []NodeScorer{NewFGD(w), BestFit{}, DotProduct{}, GPUPacking{}, GPUClustering{}} {
			score, _ := s.Score(&n, task)
			if score < 0 || score > MaxScore {
				t.Fatalf("%s score %d out of range", s.Name(), score)
			}
		}
		_ = NewRandom(1).Choose([]NodeState{n}, task)
		if n.Validate() == nil && task.Validate() == nil && Fits(&n, task) {
			d := Choose(BestFit{}, []NodeState{n}, task)
			if err := n.Place(task, d.Devices); err != nil {
				t.Fatalf("Place(Choose) = %v", err)
			}
		}
	})
}

func TestZeroAllocations(t *testing.T) {
	w := handWorkload()
	f := NewFGD(w)
	n := node(32000, gpus("G2", 1000, 600, 300, 1000, 1000, 1000, 1000, 1000))
	nodes := []NodeState{n, node(64000, gpus("G2", 1000, 1000))}
	task := shared(2000, 500)
	for name, fn := range map[string]func(){
		"Fits":          func() { Fits(&n, task) },
		"Fragmentation": func() { w.Fragmentation(&n) },
		"FGD.Score":     func() { f.Score(&n, task) },
		"BestFit.Score": func() { BestFit{}.Score(&n, task) },
		"GpuPacking":    func() { GPUPacking{}.Score(&n, task) },
		"Choose":        func() { Choose(f, nodes, task) },
	} {
		assert.Zero(t, testing.AllocsPerRun(100, fn), name)
	}
}
