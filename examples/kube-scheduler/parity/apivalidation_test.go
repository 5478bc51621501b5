package parity

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// parseAgrees checks schedkit's parse of each pod against the API
// server's validation of its scheduling fields (APISchedulingErrors):
// snapshot.NewPodInfo rejects the pod, with ErrInvalidObject and an error
// naming the pod and every field path upstream names, exactly when the API
// server would. It returns the number of pods both reject, and "" or the
// first disagreement.
func parseAgrees(pods ...*v1.Pod) (int, string, error) {
	rejected := 0
	for _, p := range pods {
		upErrs, err := APISchedulingErrors(p)
		if err != nil {
			return 0, "", err
		}
		_, ourErr := snapshot.NewPodInfo(p)
		if (len(upErrs) > 0) != (ourErr != nil) {
			return 0, fmt.Sprintf("pod %s/%s: schedkit's parse error %v, the API server's validation %v", p.Namespace, p.Name, ourErr, upErrs.ToAggregate()), nil
		}
		if ourErr == nil {
			continue
		}
		rejected++
		if !errors.Is(ourErr, snapshot.ErrInvalidObject) {
			return 0, fmt.Sprintf("pod %s/%s: %v does not wrap ErrInvalidObject", p.Namespace, p.Name, ourErr), nil
		}
		msg := ourErr.Error()
		if !strings.Contains(msg, p.Namespace+"/"+p.Name) {
			return 0, fmt.Sprintf("pod %s/%s: %q does not name the pod", p.Namespace, p.Name, msg), nil
		}
		for _, e := range upErrs {
			if !strings.Contains(msg, e.Field) {
				return 0, fmt.Sprintf("pod %s/%s: %q does not name %s (the API server: %v)", p.Namespace, p.Name, msg, e.Field, e), nil
			}
		}
	}
	return rejected, "", nil
}

// TestParseAgreesWithAPIValidation: on the pods of 2,000 generated
// inter-pod affinity cases and 2,000 spread cases (pending and bound, as
// written and as the API server stores them), schedkit's parse rejects a
// pod exactly when the API server's own validation rejects its topology
// spread constraints or pod (anti-)affinity terms, naming the same fields.
func TestParseAgreesWithAPIValidation(t *testing.T) {
	g := NewGen(paritySeed+41, ipaConfig())
	pods, rejected := 0, 0
	check := func(c int, ps ...*v1.Pod) {
		n, d, err := parseAgrees(ps...)
		require.NoError(t, err)
		require.Empty(t, d, "case %d", c)
		pods += len(ps)
		rejected += n
	}
	for c := 0; c < parityCases/5; c++ {
		cs := g.IPACase()
		check(c, append([]*v1.Pod{cs.Pod, Admitted(cs.Pod)}, append(cs.Bound, AdmittedAll(cs.Bound)...)...)...)
		sc := g.SpreadCase()
		check(c, append([]*v1.Pod{sc.Pod}, sc.Bound...)...)
	}
	t.Logf("%d pods, %d rejected by both", pods, rejected)
	require.Greater(t, rejected, 200)
	require.Less(t, rejected, pods/4)
}

// TestParseAgreesWithAPIValidationNodeAffinity: on 4,000 pods whose
// nodeSelector and node affinity are spoilt about half the time
// (Gen.NodeAffinityPod), schedkit's parse rejects a pod exactly when the
// API server's own validation rejects its scheduling fields, naming the
// same fields; as written and as the API server stores them (Admitted).
func TestParseAgreesWithAPIValidationNodeAffinity(t *testing.T) {
	g := NewGen(paritySeed+43, DefaultConfig())
	pods, rejected := 0, 0
	for c := 0; c < 2000; c++ {
		p := g.NodeAffinityPod()
		n, d, err := parseAgrees(p, Admitted(p))
		require.NoError(t, err)
		require.Empty(t, d, "case %d", c)
		pods += 2
		rejected += n
	}
	t.Logf("%d pods, %d rejected by both", pods, rejected)
	require.Greater(t, rejected, pods/5)
	require.Less(t, rejected, pods*3/4)
}

// FuzzParseAgreesWithAPIValidation: any seed.
func FuzzParseAgreesWithAPIValidation(f *testing.F) {
	for _, seed := range []uint64{0, 1, paritySeed, 1 << 40} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		g := NewGen(seed, ipaConfig())
		cs := g.IPACase()
		sc := g.SpreadCase()
		na := g.NodeAffinityPod()
		_, d, err := parseAgrees(append(append([]*v1.Pod{cs.Pod, Admitted(cs.Pod), sc.Pod, na, Admitted(na)}, cs.Bound...), sc.Bound...)...)
		require.NoError(t, err)
		require.Empty(t, d)
	})
}
