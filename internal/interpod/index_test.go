package interpod_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/internal/interpod"
	"github.com/schedkit/schedkit/internal/layout"
	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/selector"
	"github.com/schedkit/schedkit/snapshot"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

// headOf is ni's layout head, whose hostname and zone handles snapshot
// keeps: what framework and score pass to Check and Raw.
func headOf(ni *snapshot.NodeInfo) *layout.Head { return nodeview.Head(ni) }

// labelHead is a head holding only ni's hostname and zone label values
// as found in its labels: the reference for headOf.
func labelHead(ni *snapshot.NodeInfo) *layout.Head {
	var h layout.Head
	h.CPUMemory.Hostname, _ = selector.LabelValue(ni.Labels(), unique.Make(v1.LabelHostname))
	h.FilterBlock.Zone, _ = selector.LabelValue(ni.Labels(), unique.Make(v1.LabelTopologyZone))
	return &h
}

// labelsIf is ni's labels when need, else nil (what framework and score
// pass when NeedsLabels is false).
func labelsIf(need bool, ni *snapshot.NodeInfo) []snapshot.Label {
	if need {
		return ni.Labels()
	}
	return nil
}

// scanOnly is an index without match counts: the filter and score then
// count the incoming pod's own terms over every pod (the plain path).
type scanOnly struct{ interpod.Index }

func (scanOnly) MatchCounts(*interpod.Term) interpod.Domains { return nil }

// replicaTemplates: workloads whose pods carry terms about their own
// label (so that a replica's terms equal the existing replicas'), mixed
// kinds, keys and namespace forms, one with two affinity terms.
func replicaTemplates() []*v1.Pod {
	term := func(app, key string, nss []string, nsSel *metav1.LabelSelector) v1.PodAffinityTerm {
		return v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			TopologyKey: key, Namespaces: nss, NamespaceSelector: nsSel}
	}
	mk := func(app, ns string, a *v1.Affinity) *v1.Pod {
		p := snapshottest.MakePod(app).Namespace(ns).Label("app", app).Obj()
		p.Spec.Affinity = a
		return p
	}
	// The hostname and zone values come from the node's head, rack's
	// from its labels.
	host, zone, rack := v1.LabelHostname, v1.LabelTopologyZone, "rack"
	return []*v1.Pod{
		mk("web", "default", &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("web", host, nil, nil)}}}),
		mk("db", "team", &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("db", zone, []string{"team", "default"}, nil)}}}),
		mk("api", "default", &v1.Affinity{PodAffinity: &v1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 3, PodAffinityTerm: term("api", host, nil, &metav1.LabelSelector{})}}},
			PodAntiAffinity: &v1.PodAntiAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 2, PodAffinityTerm: term("web", zone, nil, nil)}}}}),
		mk("two", "default", &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("two", zone, nil, nil), term("two", host, nil, nil)}}}),
		mk("sel", "team", &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term("sel", rack, nil, &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}})}}}),
	}
}

// randomCluster is 2–9 nodes (hostnames unique or shared, some without
// one, most with one of three zones or an empty zone, most with one of
// two racks) holding 0–3 pods each, copies of tmpls (a quarter without
// their terms).
func randomCluster(r *rand.Rand, tmpls []*v1.Pod) (nodes []*v1.Node, pods []*v1.Pod) {
	for i := range 2 + r.IntN(8) {
		name := fmt.Sprint("n", i)
		w := snapshottest.MakeNode(name).Label(v1.LabelHostname, []string{name, "shared"}[min(r.IntN(6), 1)])
		if r.IntN(5) > 0 {
			w.Label(v1.LabelTopologyZone, []string{"z0", "z1", "z2", ""}[r.IntN(4)])
		}
		if r.IntN(4) > 0 {
			w.Label("rack", fmt.Sprint("r", r.IntN(2)))
		}
		nd := w.Obj()
		if r.IntN(6) == 0 {
			delete(nd.Labels, v1.LabelHostname)
		}
		nodes = append(nodes, nd)
		for j := range r.IntN(4) {
			p := tmpls[r.IntN(len(tmpls))].DeepCopy()
			if r.IntN(4) == 0 {
				p.Spec.Affinity = nil // a plain pod with the workload's label
			}
			p.Name = fmt.Sprintf("p%d-%d", i, j)
			p.Spec.NodeName = name
			pods = append(pods, p)
		}
	}
	return nodes, pods
}

// TestMatchCountsEqualScan: for replicas of workloads with terms about
// themselves, on random clusters, the filter's verdict on every node and
// the raw score of every node are the same whether the incoming pod's
// term counts come from the snapshot's match counts or from counting
// over every pod, for both hard weights and ignoreExisting settings; and
// the match counts were used.
func TestMatchCountsEqualScan(t *testing.T) {
	tmpls := replicaTemplates()
	viewed := 0
	for seed := range uint64(60) {
		r := rand.New(rand.NewPCG(seed, 11))
		nodes, pods := randomCluster(r, tmpls)
		snap := snapshottest.Snapshot(t, nodes, pods...)
		ix := interpod.IndexOf(snap)
		scan := scanOnly{interpod.ScanIndex(snap.NumNodes(), snap.Node)}
		for k, tmpl := range tmpls {
			pod := tmpl.DeepCopy()
			pod.Name = "incoming"
			terms := interpod.TermsOf(snapshot.MustPodInfo(pod))
			for kind := range interpod.NumKinds {
				for j := range terms.List(kind) {
					if ix.MatchCounts(&terms.List(kind)[j]) != nil {
						viewed++
					}
				}
			}
			msg := fmt.Sprintf("seed %d template %d", seed, k)
			fast := interpod.NewFilter(pod, terms, nil, ix, false, snap.NumNodes(), snap.Node)
			slow := interpod.NewFilter(pod, terms, nil, scan, false, snap.NumNodes(), snap.Node)
			require.Equal(t, slow == nil, fast == nil, msg)
			for i := range snap.NumNodes() {
				if fast != nil {
					ni := snap.Node(i)
					require.Equal(t, slow.Check(labelHead(ni), ni.Labels()), fast.Check(headOf(ni), labelsIf(fast.NeedsLabels(), ni)), "%s node %d", msg, i)
				}
			}
			for _, hard := range []int32{0, 1, 7} {
				for _, ignore := range []bool{false, true} {
					fs := interpod.NewScore(pod, terms, hard, ignore, nil, ix, false, snap.NumNodes(), snap.Node)
					ss := interpod.NewScore(pod, terms, hard, ignore, nil, scan, false, snap.NumNodes(), snap.Node)
					require.Equal(t, ss == nil, fs == nil, "%s hard %d ignore %v", msg, hard, ignore)
					for i := range snap.NumNodes() {
						if fs != nil {
							ni := snap.Node(i)
							require.Equal(t, ss.Raw(labelHead(ni), ni.Labels()), fs.Raw(headOf(ni), labelsIf(fs.NeedsLabels(), ni)), "%s hard %d node %d", msg, hard, i)
						}
					}
				}
			}
		}
	}
	require.Greater(t, viewed, 200, "the match counts were used")
}

// TestPreparedStaysValid: a Filter and a Score prepared over a Fork give
// the same answers after the Fork changes (pods with the same terms
// added in the same layer, which writes the index's trie nodes in
// place): they hold their own tables, not the index's domains.
func TestPreparedStaysValid(t *testing.T) {
	tmpls := replicaTemplates()
	var nodes []*v1.Node
	for i := range 6 {
		name := fmt.Sprint("n", i)
		nodes = append(nodes, snapshottest.MakeNode(name).Label(v1.LabelHostname, name).Label("zone", fmt.Sprint("z", i%3)).Obj())
	}
	for k, tmpl := range tmpls {
		f := snapshottest.Snapshot(t, nodes).Fork()
		f.Fork()
		add := func(i int, node string) {
			p := tmpl.DeepCopy()
			p.Name = fmt.Sprint("p", i)
			require.NoError(t, f.AddPod(p, node))
		}
		add(0, "n0") // the layer's first write copies the trie path
		pod := tmpl.DeepCopy()
		pod.Name = "incoming"
		terms := interpod.TermsOf(snapshot.MustPodInfo(pod))
		ix := interpod.IndexOf(f)
		filter := interpod.NewFilter(pod, terms, nil, ix, false, f.NumNodes(), f.Node)
		sc := interpod.NewScore(pod, terms, 1, false, nil, ix, false, f.NumNodes(), f.Node)
		answers := func() (out []any) {
			for i := range f.NumNodes() {
				if filter != nil {
					out = append(out, filter.Check(headOf(f.Node(i)), f.Node(i).Labels()))
				}
				if sc != nil {
					out = append(out, sc.Raw(headOf(f.Node(i)), f.Node(i).Labels()))
				}
			}
			return out
		}
		before := answers()
		require.NotEmpty(t, before, "template %d", k)
		for i := 1; i < 6; i++ {
			add(i, fmt.Sprint("n", i))
		}
		require.Equal(t, before, answers(), "template %d", k)
	}
}

// TestNodeValueFromHead: a node's value of the hostname and zone keys,
// read from its head, equals the value in its labels (missing, empty or
// set, through node updates in a Fork), and other keys are read from the
// labels; the index tests above compare paths that both go through
// NodeValue, so this one pins it to the labels.
func TestNodeValueFromHead(t *testing.T) {
	keys := []unique.Handle[string]{unique.Make(v1.LabelHostname), unique.Make(v1.LabelTopologyZone), unique.Make("rack"), unique.Make("absent")}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 5))
		nodes, pods := randomCluster(r, replicaTemplates())
		f := snapshottest.Snapshot(t, nodes, pods...).Fork()
		for step := range 3 {
			for i := range f.NumNodes() {
				ni := f.Node(i)
				for _, k := range keys {
					wv, wok := selector.LabelValue(ni.Labels(), k)
					v, ok := interpod.NodeValue(headOf(ni), ni.Labels(), k)
					require.Equal(t, wok, ok, "seed %d step %d node %s key %s", seed, step, ni.Name(), k.Value())
					require.Equal(t, wv, v, "seed %d step %d node %s key %s", seed, step, ni.Name(), k.Value())
				}
			}
			// Relabel: the head follows UpdateNode.
			again, _ := randomCluster(r, replicaTemplates())
			for _, nd := range again {
				if f.Get(nd.Name) != nil {
					require.NoError(t, f.UpdateNode(nd))
				}
			}
		}
	}
}

// TestParseOffHead: Terms.OffHead is set when some term's topology key
// is not one a node's head holds (hostname and zone are), whatever its
// kind.
func TestParseOffHead(t *testing.T) {
	term := func(key string) v1.PodAffinityTerm {
		return v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}}, TopologyKey: key}
	}
	for _, tc := range []struct {
		name string
		aff  *v1.Affinity
		want bool
	}{
		{"hostname and zone", &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(v1.LabelHostname), term(v1.LabelTopologyZone)}}}, false},
		{"rack, required affinity", &v1.Affinity{PodAffinity: &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term(v1.LabelHostname), term("rack")}}}, true},
		{"rack, preferred anti-affinity", &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term("rack")}}}}, true},
		{"legacy zone label", &v1.Affinity{PodAffinity: &v1.PodAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: term(v1.LabelFailureDomainBetaZone)}}}}, true},
	} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: v1.PodSpec{Affinity: tc.aff}}
		require.Equal(t, tc.want, interpod.Parse(pod).OffHead, tc.name)
	}
}
