package parity

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/schedkit/schedkit/internal/resname"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/snapshot"
)

// Seed and size of every parity suite: fixed, so a failure reproduces.
const (
	paritySeed  = 20260531
	parityCases = 10_000
)

// vectorDiff compares our Vector with upstream's Resource on every resource
// either side counts (cpu, memory, ephemeral-storage and every scalar);
// pods is compared only when withPods. Returns "" when equal.
func vectorDiff(ours *snapshot.Vector, up fwk.Resource, withPods bool) string {
	var diff string
	check := func(name v1.ResourceName, o, u int64) {
		if o != u {
			diff += fmt.Sprintf(" %s: ours %d, upstream %d;", name, o, u)
		}
	}
	check(v1.ResourceCPU, ours.MilliCPU(), up.GetMilliCPU())
	check(v1.ResourceMemory, ours.Memory(), up.GetMemory())
	check(v1.ResourceEphemeralStorage, ours.EphemeralStorage(), up.GetEphemeralStorage())
	if withPods {
		check(v1.ResourcePods, ours.AllowedPodNumber(), int64(up.GetAllowedPodNumber()))
	}
	seen := map[v1.ResourceName]bool{}
	for name, u := range up.GetScalarResources() {
		seen[name] = true
		id, ok := snapshot.LookupResource(name)
		var o int64
		if ok {
			o = ours.Get(id)
		}
		check(name, o, u)
	}
	for id := snapshot.ResourceID(4); int(id) < ours.Len(); id++ {
		if !seen[id.Name()] && ours.Get(id) != 0 {
			check(id.Name(), ours.Get(id), 0)
		}
	}
	return diff
}

// upstreamScoringRequest is the pod side of upstream's resource-allocation
// scorers, computed with the exact options
// noderesources/resource_allocation.go calculatePodResourceRequest passes
// under the default v1.37.2 feature gates (InPlacePodVerticalScaling on,
// PodLevelResources on, InPlacePodLevelResourcesVerticalScaling off) when
// useRequested is false (LeastAllocated, MostAllocated,
// RequestedToCapacityRatio).
func upstreamScoringRequest(pod *v1.Pod, fts Upstream) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{
		UseStatusResources: fts.Features.EnableInPlacePodVerticalScaling,
		InPlacePodLevelResourcesVerticalScalingEnabled: fts.Features.EnableInPlacePodLevelResourcesVerticalScaling,
		SkipPodLevelResources:                          !fts.Features.EnablePodLevelResources,
		NonMissingContainerRequests: v1.ResourceList{
			v1.ResourceCPU:    *resource.NewMilliQuantity(resname.DefaultMilliCPURequest, resource.DecimalSI),
			v1.ResourceMemory: *resource.NewQuantity(resname.DefaultMemoryRequest, resource.DecimalSI),
		},
	})
}

// checkPodRequests compares our PodRequests for pod with what upstream's
// NodeInfo.AddPod accounts (PodInfo.CalculateResource: Requested, Non0CPU,
// Non0Mem) and with the scorers' pod request list. "" when identical.
func checkPodRequests(u *Upstream, pod *v1.Pod) (string, error) {
	ours, err := snapshot.ComputePodRequests(pod)
	if err != nil {
		return "", err
	}
	upPod := CountedOnceForUpstream(pod) // deliberate difference: overhead counted once
	up, err := PodResource(upPod)
	if err != nil {
		return "", err
	}
	if d := vectorDiff(&ours.Requested, up.Resource, false); d != "" {
		return fmt.Sprintf("Requested(%s) differs:%s", pod.Name, d), nil
	}
	if ours.NonZeroMilliCPU != up.Non0CPU || ours.NonZeroMemory != up.Non0Mem {
		return fmt.Sprintf("NonZero(%s) = (%d, %d), upstream (%d, %d)", pod.Name,
			ours.NonZeroMilliCPU, ours.NonZeroMemory, up.Non0CPU, up.Non0Mem), nil
	}
	sr := upstreamScoringRequest(upPod, *u)
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, ResourceGPU, ResourceHugePages, ResourceFoo} {
		q := sr[name]
		want := q.Value()
		if name == v1.ResourceCPU {
			want = q.MilliValue()
		}
		var got int64
		if id, ok := snapshot.LookupResource(name); ok {
			got = ours.Scoring.Get(id)
		}
		if got != want {
			return fmt.Sprintf("Scoring[%s](%s) = %d, upstream %d", name, pod.Name, got, want), nil
		}
	}
	return "", nil
}

// ourSnapshot builds a schedkit snapshot of a case through the Cache, as
// informer events would.
func ourSnapshot(cs Case) (*snapshot.Snapshot, error) {
	cache := snapshot.NewCache()
	for _, n := range cs.Nodes {
		if err := cache.AddNode(n); err != nil {
			return nil, err
		}
	}
	for _, p := range cs.Bound {
		if err := cache.AddPod(p); err != nil {
			return nil, err
		}
	}
	return cache.Snapshot(), nil
}

// checkNodeInfos compares every node of our snapshot of cs with upstream's
// NodeInfo (u must have cs loaded): Allocatable, Requested,
// NonZeroRequested, pod count, host ports, image sizes and spread. It
// returns the first difference ("" when none) and whether some node is
// over-committed.
func checkNodeInfos(u *Upstream, cs Case, snap *snapshot.Snapshot) (diff string, overcommitted int, err error) {
	if snap.NumNodes() != len(cs.Nodes) {
		return fmt.Sprintf("NumNodes = %d, want %d", snap.NumNodes(), len(cs.Nodes)), 0, nil
	}
	for _, n := range cs.Nodes {
		ours := snap.Get(n.Name)
		if ours == nil {
			return "missing node " + n.Name, 0, nil
		}
		up, err := u.NodeInfo(n.Name)
		if err != nil {
			return "", 0, err
		}
		if d := vectorDiff(ours.Allocatable(), up.GetAllocatable(), true); d != "" {
			return fmt.Sprintf("Allocatable(%s) differs:%s", n.Name, d), 0, nil
		}
		if d := vectorDiff(ours.Requested(), up.GetRequested(), false); d != "" {
			return fmt.Sprintf("Requested(%s) differs:%s", n.Name, d), 0, nil
		}
		nz, unz := ours.NonZeroRequested(), up.GetNonZeroRequested()
		if nz.MilliCPU() != unz.GetMilliCPU() || nz.Memory() != unz.GetMemory() {
			return fmt.Sprintf("NonZeroRequested(%s) = (%d, %d), upstream (%d, %d)", n.Name,
				nz.MilliCPU(), nz.Memory(), unz.GetMilliCPU(), unz.GetMemory()), 0, nil
		}
		if ours.NumPods() != len(up.GetPods()) {
			return fmt.Sprintf("NumPods(%s) = %d, upstream %d", n.Name, ours.NumPods(), len(up.GetPods())), 0, nil
		}
		ports := map[snapshot.HostPort]bool{}
		for _, hp := range ours.UsedPorts() {
			ports[hp] = true
			if !up.GetUsedPorts().CheckConflict(hp.IP, string(hp.Protocol), hp.Port) {
				return fmt.Sprintf("port %v on %s unknown upstream", hp, n.Name), 0, nil
			}
		}
		upPorts := 0
		for _, m := range up.GetUsedPorts() {
			upPorts += len(m)
		}
		if upPorts != len(ports) {
			return fmt.Sprintf("distinct host ports on %s: %d, upstream %d", n.Name, len(ports), upPorts), 0, nil
		}
		if ours.NumImages() != len(up.GetImageStates()) {
			return fmt.Sprintf("NumImages(%s) = %d, upstream %d", n.Name, ours.NumImages(), len(up.GetImageStates())), 0, nil
		}
		for name, st := range up.GetImageStates() {
			size, ok := ours.ImageSize(name)
			if !ok || size != st.Size || snap.ImageNumNodes(name) != st.NumNodes {
				return fmt.Sprintf("image %s on %s: (%d, %v, %d nodes), upstream (%d, %d nodes)", name, n.Name,
					size, ok, snap.ImageNumNodes(name), st.Size, st.NumNodes), 0, nil
			}
		}
		if up.GetRequested().GetMilliCPU() > up.GetAllocatable().GetMilliCPU() ||
			up.GetRequested().GetMemory() > up.GetAllocatable().GetMemory() {
			overcommitted++
		}
	}
	return "", overcommitted, nil
}

// TestParityPodRequests: PodRequests of ≥ 10,000 generated pods (bound and
// pending) identical to upstream.
func TestParityPodRequests(t *testing.T) {
	u, err := NewUpstream(context.Background())
	require.NoError(t, err)
	g := NewGen(paritySeed, DefaultConfig())
	pods, resized, overhead := 0, 0, 0
	for pods < parityCases {
		cs := g.Case()
		for _, pod := range append(cs.Bound, cs.Pod) {
			pods++
			if resname.HasResizeStatus(pod) {
				resized++
			}
			if CountedOnceForUpstream(pod) != pod {
				overhead++
			}
			d, err := checkPodRequests(u, pod)
			require.NoError(t, err, "pod %s", pod.Name)
			require.Empty(t, d, "pod: %s", dump(pod))
		}
	}
	require.Greater(t, resized, pods/10, "the generator must give pods resize status")
	require.Greater(t, overhead, 50, "the generator must give pods overhead and pod-level status maps")
	t.Logf("%d pods (%d with resize status, %d with overhead in their status maps: overhead counted once): Requested, NonZero and Scoring requests identical to upstream", pods, resized, overhead)
}

// TestParityNodeInfo: 10,000 clusters, our snapshot's NodeInfo identical to
// upstream's on every node, about a fifth of them over-committed.
func TestParityNodeInfo(t *testing.T) {
	u, err := NewUpstream(context.Background())
	require.NoError(t, err)
	g := NewGen(paritySeed+1, DefaultConfig())
	nodes, overcommitted := 0, 0
	for c := 0; c < parityCases; c++ {
		cs := g.Case()
		u.Load(cs.Nodes, CountedOnceCaseForUpstream(cs).Bound)
		snap, err := ourSnapshot(cs)
		require.NoError(t, err)
		d, oc, err := checkNodeInfos(u, cs, snap)
		require.NoError(t, err)
		require.Empty(t, d, "case %d: nodes %s\nbound %s", c, dump(cs.Nodes), dump(cs.Bound))
		nodes += len(cs.Nodes)
		overcommitted += oc
	}
	require.Greater(t, overcommitted, nodes/20, "generator must over-commit nodes")
	t.Logf("%d cases, %d nodes (%d over-committed): NodeInfo identical to upstream", parityCases, nodes, overcommitted)
}

// FuzzParitySnapshot: any seed gives a cluster whose pod requests and
// NodeInfos are identical to upstream's.
func FuzzParitySnapshot(f *testing.F) {
	for _, seed := range []uint64{0, 1, paritySeed, 1 << 40} {
		f.Add(seed, uint8(6))
	}
	u, err := NewUpstream(context.Background())
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, seed uint64, nodes uint8) {
		cfg := DefaultConfig()
		cfg.Nodes = 1 + int(nodes%16)
		cs := NewGen(seed, cfg).Case()
		for _, pod := range append(cs.Bound, cs.Pod) {
			d, err := checkPodRequests(u, pod)
			require.NoError(t, err)
			require.Empty(t, d, "pod: %s", dump(pod))
		}
		u.Load(cs.Nodes, CountedOnceCaseForUpstream(cs).Bound)
		snap, err := ourSnapshot(cs)
		require.NoError(t, err)
		d, _, err := checkNodeInfos(u, cs, snap)
		require.NoError(t, err)
		require.Empty(t, d)
	})
}

// dump renders an object for a failure message.
func dump(obj any) string {
	b, err := json.Marshal(obj)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
