package snapshot

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/internal/layout"
)

func hintPod(r *rand.Rand, name, node string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: []string{"default", "team"}[r.IntN(2)],
		Labels: map[string]string{"app": []string{"a", "b", "c"}[r.IntN(3)]}}, Spec: v1.PodSpec{NodeName: node}}
	if r.IntN(3) == 0 {
		return p
	}
	var terms []v1.PodAffinityTerm
	for range 1 + r.IntN(2) {
		terms = append(terms, v1.PodAffinityTerm{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": []string{"a", "b", "c"}[r.IntN(3)]}},
			TopologyKey:   []string{v1.LabelHostname, v1.LabelTopologyZone, "rack"}[r.IntN(3)],
		})
	}
	if r.IntN(2) == 0 {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
	} else {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: terms}}
	}
	return p
}

func hintNode(r *rand.Rand, name string) *v1.Node {
	l := map[string]string{v1.LabelHostname: name}
	if r.IntN(4) > 0 {
		l[v1.LabelTopologyZone] = fmt.Sprint("z", r.IntN(3))
	}
	if r.IntN(4) > 0 {
		l["rack"] = fmt.Sprint("r", r.IntN(5))
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

// checkChunkHints: every slot's hint is nil or its node's current idx
// (never a stale podIndexes of another node or a recycled one).
func checkChunkHints(t *testing.T, s *state, msg string) {
	t.Helper()
	for i := range s.n {
		ch, j := s.chunkAt(i>>chunkShift), i&chunkMask
		if h := ch.idx[j]; h != nil && h != ch.nodes[j].idx {
			t.Fatalf("%s: node %d: stale hint", msg, i)
		}
	}
	if s.n&chunkMask != 0 { // the last chunk's empty slots hold nothing
		ch := s.chunkAt(s.n >> chunkShift)
		for j := s.n & chunkMask; j < chunkSize; j++ {
			if ch.nodes[j] != nil || ch.idx[j] != nil {
				t.Fatalf("%s: empty slot %d holds a node or hint (retention)", msg, j)
			}
		}
	}
}

// checkReadsLabels: readsLabels(p) is true whenever affPod's update
// for p reads a label off the head (oracle: p's terms and every view
// whose term matches p).
func checkReadsLabels(t *testing.T, s *state, p *PodInfo, msg string) {
	t.Helper()
	reads := false
	if tm := p.shape.affinity; tm != nil {
		for k := range interpod.NumKinds {
			for _, x := range tm.List(k) {
				reads = reads || !layout.InHead(x.TopologyKeyHandle())
			}
		}
	}
	s.aff.views.each(func(e *pent[string, termGroup]) bool {
		if e.val.term.Matches(p.shape.tmpl, nil) && !layout.InHead(e.val.term.TopologyKeyHandle()) {
			reads = true
		}
		return true
	})
	if reads && !s.readsLabels(p) {
		t.Fatalf("%s: readsLabels(%s) false but the update reads labels", msg, p.key)
	}
}

// TestChunkHintsRandom: over random Fork sequences (nested layers
// committed and reverted, snapshots kept, nodes added, removed and
// relabelled, pods with and without terms on head and custom keys, in
// two namespaces), every chunk hint of the current layer, the stacked
// layers and the kept snapshots is nil or its node's podIndexes, the
// empty slots past the last node hold nothing, and readsLabels is true
// for every change whose index update reads a label off the head.
// (A reviewer's test.)
func TestChunkHintsRandom(t *testing.T) {
	for seed := range uint64(12) {
		r := rand.New(rand.NewPCG(seed, 24))
		c := NewCache()
		const nodes = 140
		for i := range nodes {
			require.NoError(t, c.AddNode(hintNode(r, fmt.Sprint("n", i))))
			for k := range r.IntN(3) {
				require.NoError(t, c.AddPod(hintPod(r, fmt.Sprint("b", i, "-", k), fmt.Sprint("n", i))))
			}
		}
		f := c.Snapshot().Fork()
		var snaps []*Snapshot
		type placed struct {
			k    PodKey
			node string
		}
		var on []placed
		for i := range f.NumNodes() {
			for _, p := range f.Node(i).Pods() {
				on = append(on, placed{p.key, f.Node(i).Name()})
			}
		}
		for step := range 400 {
			msg := fmt.Sprintf("seed %d step %d", seed, step)
			switch op := r.IntN(12); {
			case op < 4:
				n := f.Node(r.IntN(f.NumNodes())).Name()
				pi := MustPodInfo(hintPod(r, fmt.Sprint("q", step), ""))
				checkReadsLabels(t, &f.st, pi, msg)
				require.NoError(t, f.AddPodInfo(pi, n), msg)
				on = append(on, placed{pi.key, n})
			case op < 7 && len(on) > 0:
				x := on[r.IntN(len(on))]
				if ni := f.Get(x.node); ni != nil && ni.HasPod(x.k) {
					j := ni.podIndexHash(hashKey(x.k), x.k)
					checkReadsLabels(t, &f.st, ni.pods[j], msg)
					require.NoError(t, f.RemovePod(x.k, x.node), msg)
				}
			case op == 7:
				require.NoError(t, f.AddNode(hintNode(r, fmt.Sprint("m", step)), hintPod(r, fmt.Sprint("w", step), "")), msg)
			case op == 8 && f.NumNodes() > 70:
				require.NoError(t, f.RemoveNode(f.Node(r.IntN(f.NumNodes())).Name()), msg)
			case op == 9:
				require.NoError(t, f.UpdateNode(hintNode(r, f.Node(r.IntN(f.NumNodes())).Name())), msg)
			case op == 10:
				if f.Depth() > 0 && r.IntN(2) == 0 {
					if r.IntN(3) == 0 {
						require.NoError(t, f.Commit(), msg)
					} else {
						require.NoError(t, f.Revert(), msg)
					}
				} else {
					f.Fork()
				}
			default:
				if r.IntN(4) == 0 {
					snaps = append(snaps, f.Snapshot())
				}
			}
			checkChunkHints(t, &f.st, msg)
			for _, s := range f.stack {
				checkChunkHints(t, &s, msg+" (stack)")
			}
		}
		for _, s := range snaps {
			checkChunkHints(t, &s.st, "snap")
		}
	}
}

// TestChunkHintsConcurrentCacheAndForks (a reviewer's): a Cache changes pods and nodes
// while goroutines fork its snapshots and add/remove pods in layers
// (under -race: no hint read races a write).
func TestChunkHintsConcurrentCacheAndForks(t *testing.T) {
	c := NewCache()
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 130 {
		require.NoError(t, c.AddNode(hintNode(r, fmt.Sprint("n", i))))
		require.NoError(t, c.AddPod(hintPod(r, fmt.Sprint("b", i), fmt.Sprint("n", i))))
	}
	snaps := make(chan *Snapshot, 64)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(snaps)
		r := rand.New(rand.NewPCG(3, 4))
		for step := range 600 {
			n := fmt.Sprint("n", r.IntN(130))
			switch r.IntN(4) {
			case 0, 1:
				_ = c.AddPod(hintPod(r, fmt.Sprint("c", r.IntN(50)), n))
			case 2:
				c.RemovePod(PodKey{Namespace: []string{"default", "team"}[r.IntN(2)], Name: fmt.Sprint("c", r.IntN(50))})
			default:
				_ = c.UpdateNode(hintNode(r, n))
			}
			if step%20 == 0 {
				snaps <- c.Snapshot()
			}
		}
	})
	for g := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 9))
			for s := range snaps {
				f := s.Fork()
				for k := range 60 {
					f.Fork()
					n := f.Node(r.IntN(f.NumNodes())).Name()
					pi := MustPodInfo(hintPod(r, fmt.Sprint("g", g, "-", k), ""))
					_ = f.AddPodInfo(pi, n)
					if r.IntN(3) == 0 {
						_ = f.RemovePod(pi.key, n)
					}
					if r.IntN(5) == 0 {
						_ = f.Commit()
					} else {
						_ = f.Revert()
					}
					if r.IntN(10) == 0 {
						_ = f.Snapshot()
					}
				}
			}
		})
	}
	wg.Wait()
}
