package interpod

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestTermKey pins Term.Key's text (the values are what the
// strings.Builder version before the one-buffer rewrite produced):
// namespaces sorted and deduplicated, matchLabels sorted by key, every
// field quoted, matchExpressions in their order.
func TestTermKey(t *testing.T) {
	in := metav1.LabelSelectorOpIn
	for _, c := range []struct {
		name       string
		topology   string
		names      []string
		nsSel, sel *metav1.LabelSelector
		want       string
	}{
		{"scheduler_perf anti-affinity", "kubernetes.io/hostname", []string{"sched-1", "sched-0"}, nil,
			&metav1.LabelSelector{MatchLabels: map[string]string{"color": "green"}},
			`"kubernetes.io/hostname" ns["sched-0" "sched-1" ] nsSel nil sel {"color"="green" |}`},
		{"duplicates, quotes, expressions", "zone", []string{"b", "a", "b"}, &metav1.LabelSelector{},
			&metav1.LabelSelector{MatchLabels: map[string]string{"z": "1", `a"q`: "x y"},
				MatchExpressions: []metav1.LabelSelectorRequirement{
					{Key: "k", Operator: in, Values: []string{"v2", "v1"}},
					{Key: "e", Operator: metav1.LabelSelectorOpExists}}},
			`"zone" ns["a" "b" ] nsSel {|} sel {"a\"q"="x y" "z"="1" |"k" "In" ("v2" "v1" ) "e" "Exists" () }`},
		{"namespace selector, nil selector", "", nil, &metav1.LabelSelector{MatchLabels: map[string]string{"team": "a"}}, nil,
			`"" ns[] nsSel {"team"="a" |} sel nil`},
		{"more than 8 namespaces and labels", "k", []string{"9", "8", "7", "6", "5", "4", "3", "2", "1", "0"}, nil,
			&metav1.LabelSelector{MatchLabels: map[string]string{"i": "", "h": "", "g": "", "f": "", "e": "", "d": "", "c": "", "b": "", "a": ""}},
			`"k" ns["0" "1" "2" "3" "4" "5" "6" "7" "8" "9" ] nsSel nil sel {"a"="" "b"="" "c"="" "d"="" "e"="" "f"="" "g"="" "h"="" "i"="" |}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			names := append([]string(nil), c.names...)
			assert.Equal(t, c.want, termKey(c.topology, c.names, c.nsSel, c.sel))
			assert.Equal(t, names, c.names, "termKey must not reorder the term's namespaces")
		})
	}
}

// TestTermKeyInterned: equal terms of two pods parsed apart share their
// key's bytes (the index's and the memo's comparisons stop at the
// pointers); a different term's key does not.
func TestTermKeyInterned(t *testing.T) {
	pod := func(name, app string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: v1.PodSpec{Affinity: &v1.Affinity{
			PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: v1.LabelHostname}}}}}}
	}
	a, b, c := Parse(pod("a", "web")), Parse(pod("b", "web")), Parse(pod("c", "db"))
	ka, kb, kc := a.RequiredAntiAffinity[0].Key(), b.RequiredAntiAffinity[0].Key(), c.RequiredAntiAffinity[0].Key()
	assert.Equal(t, ka, kb)
	assert.Same(t, unsafe.StringData(ka), unsafe.StringData(kb))
	assert.NotEqual(t, ka, kc)
}
