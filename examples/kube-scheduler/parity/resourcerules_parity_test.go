package parity

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corev1 "k8s.io/kubernetes/pkg/apis/core/v1"
	"k8s.io/kubernetes/pkg/apis/core/validation"

	"github.com/schedkit/schedkit/snapshot/load"
)

// rulesGen draws resource lists for TestLoaderResourceRulesMatchUpstream:
// names valid for containers (so upstream's name rules, which the loader
// does not apply, never fire), quantities whole and fractional, equal,
// above and below each other.
type rulesGen struct{ r *rand.Rand }

var rulesResources = []v1.ResourceName{"cpu", "memory", "ephemeral-storage", "nvidia.com/gpu", "example.com/foo", "example.kubernetes.io/x", "hugepages-2Mi"}

func (g rulesGen) qty(name v1.ResourceName) resource.Quantity {
	pool := []string{"0", "1", "2", "100m", "500m", "0.5", "1500m", "1.9999", "1.0001", "0.0001", "1000m", "2000m", "3", "1e3", "7k", "1Gi", "1073741825"}
	if name == "hugepages-2Mi" { // upstream also wants a multiple of the page size
		pool = []string{"0", "2Mi", "4Mi"}
	}
	return resource.MustParse(pool[g.r.IntN(len(pool))])
}

func (g rulesGen) list(names []v1.ResourceName) v1.ResourceList {
	if g.r.IntN(4) == 0 {
		return nil
	}
	l := v1.ResourceList{}
	for _, name := range names {
		if g.r.IntN(3) == 0 {
			l[name] = g.qty(name)
		}
	}
	return l
}

func (g rulesGen) requirements() v1.ResourceRequirements {
	r := v1.ResourceRequirements{Requests: g.list(rulesResources), Limits: g.list(rulesResources)}
	if g.r.IntN(3) == 0 && r.Requests != nil { // equal values written the same or not
		r.Limits = v1.ResourceList{}
		for k, q := range r.Requests {
			if g.r.IntN(2) == 0 {
				r.Limits[k] = q.DeepCopy()
			}
		}
	}
	return r
}

// upstreamRequirementErrors runs the API server's container resource
// validation (k8s.io/kubernetes v1.37.2 pkg/apis/core/validation
// ValidateContainerResourceRequirements) on r, leaving out the rule the
// loader does not apply (hugepages need cpu or memory beside them).
func upstreamRequirementErrors(t *testing.T, r v1.ResourceRequirements) field.ErrorList {
	var c core.ResourceRequirements
	require.NoError(t, corev1.Convert_v1_ResourceRequirements_To_core_ResourceRequirements(&r, &c, nil))
	var out field.ErrorList
	for _, e := range validation.ValidateContainerResourceRequirements(&c, nil, field.NewPath("spec", "containers").Index(0).Child("resources"), validation.PodValidationOptions{}) {
		if e.Type == field.ErrorTypeForbidden && strings.Contains(e.Detail, "HugePages require cpu or memory") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// TestLoaderResourceRulesMatchUpstream: for random container
// requirements and node capacities, snapshot/load refuses exactly what
// the API server's own validation refuses (k8s.io/kubernetes v1.37.2
// ValidateContainerResourceRequirements for a container's requests and
// limits, ValidateNodeResources for a node's capacity and allocatable):
// fractional extended resources and pods, requests above limits,
// extended resources and hugepages without an equal limit. Each object is
// read alone, so that a refusal is the object's own.
func TestLoaderResourceRulesMatchUpstream(t *testing.T) {
	const cases = 3000
	g := rulesGen{rand.New(rand.NewPCG(15, 2026))}
	var accepted, refused int
	for i := range cases {
		p := &v1.Pod{TypeMeta: metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "p" + strconv.Itoa(i), Namespace: "default"}}
		p.Spec.Containers = []v1.Container{{Name: "c", Resources: g.requirements()}}
		js, err := json.Marshal(p)
		require.NoError(t, err)
		var decoded v1.Pod // as the API server receives it (empty maps dropped)
		require.NoError(t, json.Unmarshal(js, &decoded))
		up := upstreamRequirementErrors(t, decoded.Spec.Containers[0].Resources)
		_, err = load.Read(bytes.NewReader(js), "pod.json")
		require.Equal(t, len(up) == 0, err == nil, "pod %s: upstream %v; schedkit %v", js, up, err)
		if err != nil {
			require.True(t, errors.Is(err, load.ErrInvalidObject), "%v", err)
			refused++
		} else {
			accepted++
		}

		n := &v1.Node{TypeMeta: metav1.TypeMeta{Kind: "Node", APIVersion: "v1"}, ObjectMeta: metav1.ObjectMeta{Name: "n" + strconv.Itoa(i)}}
		names := append([]v1.ResourceName{"pods"}, rulesResources...)
		n.Status.Capacity, n.Status.Allocatable = g.list(names), g.list(names)
		js, err = json.Marshal(n)
		require.NoError(t, err)
		var cn core.Node
		require.NoError(t, corev1.Convert_v1_Node_To_core_Node(n, &cn, nil))
		upn := validation.ValidateNodeResources(&cn)
		_, err = load.Read(bytes.NewReader(js), "node.json")
		require.Equal(t, len(upn) == 0, err == nil, "node %s: upstream %v; schedkit %v", js, upn, err)
	}
	// Both outcomes are exercised.
	require.Greater(t, accepted, cases/10)
	require.Greater(t, refused, cases/10)
}

// TestDifferenceIntegerBeyondInt64: beyond int64 milli-units, where
// upstream's MilliValue()%1000 test reads a wrapped value, the loader
// tests quantities of integer resources exactly: whole numbers pass
// ("1e30", as upstream, whose MilliValue wraps to 0 there) and fractions
// are refused (239807672958224171.008, 13·2^64 milli-units, which
// upstream passes: its MilliValue wraps to 0). Below that bound both
// use the same test, so "1.9999" (2000m rounded up) passes both.
func TestDifferenceIntegerBeyondInt64(t *testing.T) {
	for _, c := range []struct {
		q      string
		schedk bool // the loader accepts
	}{
		{"1e30", true},
		{"9223372036854775807", true},
		{"1000000000000000000000000000000.5", false},
		{"9223372036854775807.5", false},
		{"239807672958224171.008", false}, // 13·2^64 milli-units: upstream's MilliValue wraps to 0 and passes it
		{"1.9999", true},
		{"1.0001", false},
	} {
		q := resource.MustParse(c.q)
		up := validation.ValidateResourceQuantityValue("nvidia.com/gpu", q, field.NewPath("limits"))
		in := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n"},"status":{"capacity":{"nvidia.com/gpu":"` + c.q + `"}}}`
		_, err := load.Read(strings.NewReader(in), "node.json")
		t.Logf("%s: upstream errors %v (MilliValue %d); schedkit %v", c.q, up, q.MilliValue(), err)
		require.Equal(t, c.schedk, err == nil, "%s: %v", c.q, err)
		if c.q == "239807672958224171.008" {
			require.Empty(t, up, "the deliberate difference: upstream passes this fraction")
		}
		if q.Cmp(resource.MustParse("9e15")) < 0 {
			require.Equal(t, len(up) == 0, err == nil, "%s: below int64 milli-units the rule is upstream's", c.q)
		}
	}
}
