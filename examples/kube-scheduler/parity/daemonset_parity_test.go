package parity

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/daemon"
	daemonutil "k8s.io/kubernetes/pkg/controller/daemon/util"

	"github.com/schedkit/schedkit/snapshot/load"
)

// dsCase draws a cluster of nodes (role labels, taints of every effect,
// among them the ones the DaemonSet controller tolerates by default) and
// a DaemonSet whose template may carry a nodeSelector, a required node
// affinity (on labels, or on metadata.name), tolerations (some with the
// key, operator and effect of a default one, with tolerationSeconds),
// hostNetwork, spec.nodeName and the template generation annotation.
func dsCase(rng *rand.Rand) ([]*v1.Node, *appsv1.DaemonSet) {
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	taintKeys := []string{"dedicated", "gpu", v1.TaintNodeUnschedulable, v1.TaintNodeNotReady, v1.TaintNodeUnreachable,
		v1.TaintNodeDiskPressure, v1.TaintNodeNetworkUnavailable, v1.TaintNodePIDPressure}
	effects := []v1.TaintEffect{v1.TaintEffectNoSchedule, v1.TaintEffectNoExecute, v1.TaintEffectPreferNoSchedule}
	var nodes []*v1.Node
	for i := range 1 + rng.IntN(8) {
		n := &v1.Node{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}, ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("n%d", i), Labels: map[string]string{}}}
		if r := pick("a", "b", ""); r != "" {
			n.Labels["role"] = r
		}
		if rng.IntN(2) == 0 {
			n.Labels["zone"] = pick("z1", "z2")
		}
		for range rng.IntN(3) {
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: taintKeys[rng.IntN(len(taintKeys))], Value: pick("", "x"), Effect: effects[rng.IntN(len(effects))]})
		}
		nodes = append(nodes, n)
	}
	ds := &appsv1.DaemonSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "kube-system"},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "agent"}},
				Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "agent"}}},
			},
		},
	}
	spec := &ds.Spec.Template.Spec
	if rng.IntN(4) == 0 {
		spec.NodeSelector = map[string]string{"role": pick("a", "b")}
	}
	switch rng.IntN(4) {
	case 0:
		spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
			{MatchExpressions: []v1.NodeSelectorRequirement{{Key: pick("role", "zone"), Operator: []v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist}[rng.IntN(4)], Values: nil}}},
		}}}}
		r := &spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions[0]
		if r.Operator == v1.NodeSelectorOpIn || r.Operator == v1.NodeSelectorOpNotIn {
			r.Values = []string{pick("a", "z1"), pick("b", "z2")}
		}
	case 1:
		spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{
				{MatchFields: []v1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{fmt.Sprintf("n%d", rng.IntN(4))}}}},
				{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "role", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}}}},
			}},
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{{Weight: 3, Preference: v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{{Key: "zone", Operator: v1.NodeSelectorOpExists}}}}},
		}}
	}
	for range rng.IntN(3) {
		t := v1.Toleration{Key: taintKeys[rng.IntN(len(taintKeys))], Operator: []v1.TolerationOperator{v1.TolerationOpExists, v1.TolerationOpEqual}[rng.IntN(2)]}
		if t.Operator == v1.TolerationOpEqual {
			t.Value = pick("", "x")
		}
		if rng.IntN(2) == 0 {
			t.Effect = effects[rng.IntN(len(effects))]
		}
		if t.Effect == v1.TaintEffectNoExecute && rng.IntN(2) == 0 {
			t.TolerationSeconds = new(int64(300))
		}
		spec.Tolerations = append(spec.Tolerations, t)
	}
	spec.HostNetwork = rng.IntN(3) == 0
	if rng.IntN(8) == 0 {
		spec.NodeName = fmt.Sprintf("n%d", rng.IntN(3))
	}
	if rng.IntN(3) == 0 {
		ds.Annotations = map[string]string{appsv1.DeprecatedTemplateGeneration: fmt.Sprint(1 + rng.IntN(9))}
	}
	return nodes, ds
}

// TestParityDaemonSetExpansion: snapshot/load's expansion of a DaemonSet
// (ExpandWorkloads) makes a pod for exactly the nodes upstream's
// DaemonSet controller would run it on (daemon.NodeShouldRunDaemonPod's
// shouldRun), and each pod has the tolerations, node affinity and labels
// of upstream's CreatePodTemplate plus ReplaceDaemonSetPodNodeNameNodeAffinity
// for its node (no revision hash: load sets no controller-revision-hash
// label, documented). 3,000 random cases; 0 differences.
func TestParityDaemonSetExpansion(t *testing.T) {
	logger := klog.Background()
	withPods := 0
	for seed := range uint64(3000) {
		rng := rand.New(rand.NewPCG(seed, 11))
		nodes, ds := dsCase(rng)
		var in bytes.Buffer
		for _, n := range nodes {
			writeDoc(t, &in, n)
		}
		writeDoc(t, &in, ds)
		objs, err := load.Options{ExpandWorkloads: true}.Read(bytes.NewReader(in.Bytes()), "in.yaml")
		require.NoError(t, err, "seed %d", seed)

		var want []string
		for _, n := range nodes {
			if run, _ := daemon.NodeShouldRunDaemonPod(logger, n, ds); run {
				want = append(want, n.Name)
			}
		}
		got := map[string]*v1.Pod{}
		var order []string
		for _, p := range objs.Pods {
			terms := p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
			name := terms[0].MatchFields[0].Values[0]
			got[name] = p
			order = append(order, name)
		}
		require.Equal(t, want, order, "seed %d: the nodes with a pod", seed)
		if len(want) > 0 {
			withPods++
		}

		var gen *int64
		if g, err := daemonutil.GetTemplateGeneration(ds); err == nil {
			gen = g
		}
		tmpl := daemonutil.CreatePodTemplate(ds.Spec.Template, gen, "")
		for _, name := range want {
			up := tmpl.DeepCopy()
			up.Spec.Affinity = daemonutil.ReplaceDaemonSetPodNodeNameNodeAffinity(up.Spec.Affinity, name)
			p := got[name]
			require.True(t, apiequality.Semantic.DeepEqual(up.Spec.Tolerations, p.Spec.Tolerations), "seed %d node %s: tolerations\nupstream %+v\nours     %+v", seed, name, up.Spec.Tolerations, p.Spec.Tolerations)
			require.True(t, apiequality.Semantic.DeepEqual(up.Spec.Affinity, p.Spec.Affinity), "seed %d node %s: affinity\nupstream %+v\nours     %+v", seed, name, up.Spec.Affinity, p.Spec.Affinity)
			require.Equal(t, up.Labels, p.Labels, "seed %d node %s: labels", seed, name)
			require.Equal(t, up.Spec.NodeSelector, p.Spec.NodeSelector, "seed %d node %s", seed, name)
			require.Equal(t, up.Spec.NodeName, p.Spec.NodeName, "seed %d node %s", seed, name)
		}
	}
	require.Greater(t, withPods, 1500, "cases where the DaemonSet runs somewhere")
}

// writeDoc appends obj's JSON (a YAML document) to b.
func writeDoc(t *testing.T, b *bytes.Buffer, obj any) {
	t.Helper()
	js, err := json.Marshal(obj)
	require.NoError(t, err)
	b.WriteString("---\n")
	b.Write(js)
	b.WriteString("\n")
}
