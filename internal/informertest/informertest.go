// Package informertest is the conformance suite of schedkit's informer
// contract: the one set of rules by which every store fed by informer
// events — snapshot.Cache, reserve.Ledger, and the kube-scheduler
// adapter's feed — takes node and pod events. [Run] checks each rule on a
// fresh store and then runs [Random]; [Random] applies random event
// sequences to any number of stores and to a deliberately simple reference
// model, and compares every store with the model after every step.
//
// Layer: internal, test support (imported by _test files only). Imports
// only k8s.io/api, k8s.io/apimachinery and testify, so any schedkit
// package, and the framework/kubescheduler module, can run it.
//
// # The contract
//
// It follows upstream kube-scheduler v1.37's event handlers
// (pkg/scheduler/eventhandlers.go) and scheduler cache
// (pkg/scheduler/backend/cache/cache.go); where a library must differ, the
// rule says so. A pod is known by its key, namespace/name. What "counts"
// means: a counted pod's effective request is in its node's Requested, the
// pod is in the node's pod list, and the node is in the store's snapshots.
// Which pods count is decided by internal/informer.Classify, the one
// implementation every store calls.
//
//   - Nodes. AddNode of a known node updates it (allocatable, labels,
//     taints, images) and keeps its pods; UpdateNode of an unknown node adds
//     it (informers replay events; upstream's UpdateNode adds too).
//     RemoveNode takes the node out of what is counted; its pods stay with
//     the store, outside snapshots, until they are deleted or the node is
//     added again, when they count there again (upstream's ghost node).
//     RemoveNode of a node the store does not have (never added, or
//     removed) is an error naming the node and changes nothing (upstream's
//     cache returns "node ... is not found", which its handler logs).
//   - Assigned pods (spec.nodeName set, status.phase neither Succeeded
//     nor Failed) count on spec.nodeName. A repeated AddPod, or an
//     UpdatePod, replaces the counted pod (upstream's AddPod of a pod it
//     has is an error its handler logs; after a relist it is routine); an
//     UpdatePod of an unknown pod adds it. An update naming another node
//     with a new metadata.uid (the pod was deleted and created again, the
//     delete and add merged into one update, as upstream's event handler
//     updatePodInCache treats it) moves the pod: it leaves the old node
//     and counts on the new one. The same pod (same uid) on another node
//     cannot happen (spec.nodeName is immutable; upstream's cache takes it
//     as corruption and exits): it is an error naming the pod and both
//     nodes, and changes nothing, also for a pod kept for an absent node.
//   - Pods before their node. An assigned pod whose node the store does
//     not have is kept and counted nowhere; when the node is added it
//     counts there. Deleting it meanwhile forgets it.
//   - Unbound pods (spec.nodeName empty, not terminal) are not counted and
//     not kept: AddPod and UpdatePod return nil and change nothing
//     (upstream's handlers send such a pod to the scheduling queue, never
//     to the cache). A store that also holds the scheduler's own
//     reservations keeps them: an unbound report is not a delete.
//     Because spec.nodeName cannot be cleared once set, an unbound report
//     of a pod the store has as assigned is an error naming the pod and
//     spec.nodeName, and changes nothing (upstream exits).
//   - Terminal pods (status.phase Succeeded or Failed) are gone: AddPod and
//     UpdatePod remove a known one as RemovePod does, never count one, and
//     return nil. Upstream's pod informer filters terminal pods out with a
//     field selector, so they reach its cache as deletes; an informer
//     without that selector reports them as updates, and the result is the
//     same. Only a terminal pod's key is read.
//   - RemovePod removes the pod wherever it is (on a node, or kept for an
//     absent one) and reports whether the store had it; a pod the store
//     does not have is a no-op reporting false (upstream returns an error
//     its handler only logs).
//   - Bad objects. A nil node or pod, an empty metadata.name, a negative or
//     unparsable quantity in a node's status.allocatable or in an assigned
//     pod's requests: an error naming the object (node name, pod
//     namespace/name) and the field, and the store is exactly as before the
//     call. A pod's key is checked whatever the pod's kind: a
//     metadata.name or metadata.namespace the API server refuses (not a
//     DNS-1123 subdomain, label) is such an error for an unbound or
//     terminal pod too, as no informer delivers one. The rest of a pod is
//     read only when it counts (an unbound or terminal pod with a bad
//     request is classified, not parsed: the request of a pending pod is
//     checked when the scheduler takes it, by snapshot.NewPodInfo, and
//     again when it is reported bound).
//   - Feeds. A feed that forwards informer events to a store (the
//     kube-scheduler adapter's handlers) passes the store's errors on — as
//     its Store's results in this suite, logged and counted in production —
//     rather than dropping them.
//
// # Usage
//
// A store's test wraps it in a [Store] and calls Run:
//
//	func TestInformerContract(t *testing.T) {
//		informertest.Run(t, func() informertest.Store { return cacheStore{snapshot.NewCache()} })
//	}
//
// # Concurrency
//
// The suite drives one store from one goroutine; it checks the contract,
// not the stores' locking.
//
// # Cost
//
// Run takes well under a second per store: a few dozen events per rule and
// [Random] over [RandomSeeds] seeds of [RandomSteps] events, reading the
// store back after each event (O(nodes + pods) per read).
package informertest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/internal/quantity"
)

// Store is a store fed by informer events, as the suite drives it. The
// event methods are the informer's Add, Update and Delete handlers for
// nodes and pods; Counted reads back what the store counts.
type Store interface {
	AddNode(node *v1.Node) error
	UpdateNode(node *v1.Node) error
	// RemoveNode is the node informer's delete (the object carries the
	// name).
	RemoveNode(node *v1.Node) error
	AddPod(pod *v1.Pod) error
	UpdatePod(pod *v1.Pod) error
	// RemovePod is the pod informer's delete; it reports whether the
	// store had the pod (counted, or kept for an absent node).
	RemovePod(pod *v1.Pod) bool
	// Counted returns, for every node the store has (added and not
	// removed), what it counts there: the same as what its snapshots show.
	Counted() map[string]Node
}

// Node is what a store counts on one node.
type Node struct {
	// Allocatable is the node's status.allocatable.
	Allocatable Amounts
	// Requested sums the effective requests of the pods counted here.
	Requested Amounts
	// NumPods is the store's own count of the pods here (a store keeping
	// a counter beside the list must agree with the list).
	NumPods int
	// Pods are the keys of the pods counted here, "namespace/name", in
	// any order.
	Pods []string
}

// Amounts are the two resources the suite's pods request.
type Amounts struct {
	MilliCPU int64 // millicores
	Memory   int64 // bytes
}

func (a Amounts) add(b Amounts) Amounts { return Amounts{a.MilliCPU + b.MilliCPU, a.Memory + b.Memory} }

// MakeNode returns a node called name with cpu and memory (quantities,
// e.g. "4", "8Gi") allocatable.
func MakeNode(name, cpu, memory string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU:    resource.MustParse(cpu),
			v1.ResourceMemory: resource.MustParse(memory),
			v1.ResourcePods:   resource.MustParse("110"),
		}},
	}
}

// MakePod returns a Running pod namespace/name on node ("" for unbound)
// with one container requesting cpu and memory (quantities; "" requests
// none of it).
func MakePod(namespace, name, node, cpu, memory string) *v1.Pod {
	req := v1.ResourceList{}
	if cpu != "" {
		req[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		req[v1.ResourceMemory] = resource.MustParse(memory)
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, UID: types.UID("uid-" + namespace + "-" + name)},
		Spec: v1.PodSpec{
			NodeName:   node,
			Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: req}}},
		},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
}

func withPhase(p *v1.Pod, phase v1.PodPhase) *v1.Pod {
	c := p.DeepCopy()
	c.Status.Phase = phase
	return c
}

func onNode(p *v1.Pod, node string) *v1.Pod {
	c := p.DeepCopy()
	c.Spec.NodeName = node
	return c
}

// counted returns s.Counted() with pod lists sorted and empty ones nil,
// so that expectations compare with require.Equal.
func counted(s Store) state {
	got := state(s.Counted())
	for name, n := range got {
		n.Pods = slices.Sorted(slices.Values(n.Pods))
		if len(n.Pods) == 0 {
			n.Pods = nil
		}
		got[name] = n
	}
	return got
}

// state builds an expected Counted result.
type state map[string]Node

func (s state) node(name string, alloc Amounts, pods ...podAt) state {
	n := Node{Allocatable: alloc}
	for _, p := range pods {
		n.Requested = n.Requested.add(p.req)
		n.Pods = append(n.Pods, p.key)
	}
	slices.Sort(n.Pods)
	n.NumPods = len(n.Pods)
	s[name] = n
	return s
}

type podAt struct {
	key string
	req Amounts
}

var (
	big   = Amounts{4000, 8 << 30}   // MakeNode(_, "4", "8Gi")
	small = Amounts{2000, 4 << 30}   // MakeNode(_, "2", "4Gi")
	reqA  = Amounts{500, 1 << 30}    // "500m", "1Gi"
	reqB  = Amounts{1500, 512 << 20} // "1500m", "512Mi"
)

func bigNode(name string) *v1.Node   { return MakeNode(name, "4", "8Gi") }
func smallNode(name string) *v1.Node { return MakeNode(name, "2", "4Gi") }

// recreated gives pod the metadata.uid of its i-th re-creation: a pod
// deleted and created again under the same name, whose delete and add an
// informer may merge into one update.
func recreated(pod *v1.Pod, i int) *v1.Pod {
	pod.UID = types.UID(fmt.Sprintf("%s-%d", pod.UID, i))
	return pod
}

func podA(name, node string) *v1.Pod { return MakePod("default", name, node, "500m", "1Gi") }
func podB(name, node string) *v1.Pod { return MakePod("default", name, node, "1500m", "512Mi") }
func a(name string) podAt            { return podAt{"default/" + name, reqA} }
func b(name string) podAt            { return podAt{"default/" + name, reqB} }

// feed adds objs (nodes and pods) to s, failing t on an error.
func feed(t testing.TB, s Store, objs ...any) {
	t.Helper()
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.Node:
			require.NoError(t, s.AddNode(o), o.Name)
		case *v1.Pod:
			require.NoError(t, s.AddPod(o), o.Name)
		default:
			t.Fatalf("informertest: feed: %T", o)
		}
	}
}

// Run checks every rule of the contract (see the package doc) on fresh
// stores from newStore, then runs [Random] over [RandomSeeds] seeds.
func Run(t *testing.T, newStore func() Store) {
	t.Run("assigned pods count on their node", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), bigNode("n2"), podA("p1", "n1"), podB("p2", "n1"), podA("p3", "n2"))
		require.Equal(t, state{}.node("n1", big, a("p1"), b("p2")).node("n2", big, a("p3")), counted(s))
	})

	t.Run("repeated adds and updates replace the pod", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), podA("p1", "n1"), podA("p1", "n1"))
		require.Equal(t, state{}.node("n1", big, a("p1")), counted(s), "a repeated add counts the pod once")
		require.NoError(t, s.AddPod(podB("p1", "n1")))
		require.Equal(t, state{}.node("n1", big, b("p1")), counted(s), "an add of a known pod replaces it")
		require.NoError(t, s.UpdatePod(podA("p1", "n1")))
		require.Equal(t, state{}.node("n1", big, a("p1")), counted(s), "an update replaces it")
	})

	t.Run("updates of unknown objects add them", func(t *testing.T) {
		s := newStore()
		require.NoError(t, s.UpdateNode(bigNode("n1")))
		require.NoError(t, s.UpdatePod(podA("p1", "n1")))
		require.Equal(t, state{}.node("n1", big, a("p1")), counted(s))
	})

	t.Run("repeated node adds update the node and keep its pods", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), podA("p1", "n1"), smallNode("n1"))
		require.Equal(t, state{}.node("n1", small, a("p1")), counted(s))
		require.NoError(t, s.UpdateNode(bigNode("n1")))
		require.Equal(t, state{}.node("n1", big, a("p1")), counted(s))
	})

	t.Run("a pod moved to another node leaves the old one", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), bigNode("n2"), podA("p1", "n1"))
		require.NoError(t, s.UpdatePod(recreated(podB("p1", "n2"), 1)))
		require.Equal(t, state{}.node("n1", big).node("n2", big, b("p1")), counted(s))
		// To a node the store does not have: counted nowhere until it comes.
		require.NoError(t, s.UpdatePod(recreated(podB("p1", "n3"), 2)))
		require.Equal(t, state{}.node("n1", big).node("n2", big), counted(s))
		require.NoError(t, s.AddNode(smallNode("n3")))
		require.Equal(t, state{}.node("n1", big).node("n2", big).node("n3", small, b("p1")), counted(s))
	})

	t.Run("deleted pods are gone", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), podA("p1", "n1"), podB("p2", "n1"))
		assert.True(t, s.RemovePod(podA("p1", "n1")))
		require.Equal(t, state{}.node("n1", big, b("p2")), counted(s))
		assert.False(t, s.RemovePod(podA("p1", "n1")), "a second delete is a no-op")
		// The delete's object may be stale (a tombstone): the key decides.
		assert.True(t, s.RemovePod(podB("p2", "")))
		require.Equal(t, state{}.node("n1", big), counted(s))
	})

	t.Run("deletes of unknown objects", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), podA("p1", "n1"))
		before := counted(s)
		assert.False(t, s.RemovePod(podA("ghost", "n1")), "unknown pod: no-op")
		assert.False(t, s.RemovePod(MakePod("other", "p1", "n1", "", "")), "same name, other namespace")
		unknownNodeDelete(t, s, s.RemoveNode(bigNode("nope")), "nope")
		require.Equal(t, before, counted(s))
	})

	t.Run("pods before their node", func(t *testing.T) {
		s := newStore()
		feed(t, s, podA("early", "n1"), podB("gone", "n1"))
		require.Equal(t, state{}, counted(s), "no node, nothing counted")
		assert.True(t, s.RemovePod(podB("gone", "n1")), "a pod kept for its node can be deleted")
		require.NoError(t, s.AddNode(bigNode("n1")))
		require.Equal(t, state{}.node("n1", big, a("early")), counted(s))
	})

	t.Run("node removed with pods", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), bigNode("n2"), podA("p1", "n1"), podB("p2", "n1"))
		require.NoError(t, s.RemoveNode(bigNode("n1")))
		require.Equal(t, state{}.node("n2", big), counted(s))
		unknownNodeDelete(t, s, s.RemoveNode(bigNode("n1")), "n1") // a removed node cannot be removed again
		// The pods stay with the store: updates and deletes reach them.
		require.NoError(t, s.UpdatePod(podA("p2", "n1")))
		assert.True(t, s.RemovePod(podA("p1", "n1")))
		require.NoError(t, s.AddNode(smallNode("n1")))
		require.Equal(t, state{}.node("n1", small, a("p2")).node("n2", big), counted(s))
		// Removed again and its last pod deleted: the node comes back empty.
		require.NoError(t, s.RemoveNode(smallNode("n1")))
		assert.True(t, s.RemovePod(podA("p2", "n1")))
		require.NoError(t, s.UpdateNode(smallNode("n1")))
		require.Equal(t, state{}.node("n1", small).node("n2", big), counted(s))
	})

	t.Run("unbound pods are not counted", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), podA("pending", ""))
		require.NoError(t, s.UpdatePod(podB("pending", "")))
		require.Equal(t, state{}.node("n1", big), counted(s))
		assert.False(t, s.RemovePod(podA("pending", "")), "an unbound pod is not kept")
		// Bound later (upstream: an update from unassigned to assigned is an add).
		require.NoError(t, s.UpdatePod(podA("pending", "n1")))
		require.Equal(t, state{}.node("n1", big, a("pending")), counted(s))
		// An unbound pod's requests are not read.
		require.NoError(t, s.AddPod(MakePod("default", "bad-pending", "", "-1", "")))
		require.Equal(t, state{}.node("n1", big, a("pending")), counted(s))
	})

	t.Run("an unbound report of an assigned pod is an error", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), podA("p1", "n1"), podA("waiting", "n9"))
		before := counted(s)
		for _, p := range []*v1.Pod{podA("p1", ""), podA("waiting", "")} {
			err := s.UpdatePod(p)
			require.Error(t, err, p.Name)
			assert.Contains(t, err.Error(), "default/"+p.Name)
			assert.Contains(t, err.Error(), "spec.nodeName")
			require.Equal(t, before, counted(s))
		}
		require.NoError(t, s.AddNode(bigNode("n9")))
		require.Equal(t, state{}.node("n1", big, a("p1")).node("n9", big, a("waiting")), counted(s), "waiting pod still kept")
	})

	t.Run("the same pod reported on another node is an error", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), bigNode("n2"), podA("p1", "n1"), podA("waiting", "n9"))
		before := counted(s)
		// Same names, so the same metadata.uid: spec.nodeName changed.
		for i, p := range []*v1.Pod{podB("p1", "n2"), podA("waiting", "n1"), podA("p1", "n9")} {
			report := s.UpdatePod
			if i == 1 {
				report = s.AddPod
			}
			err := report(p)
			require.Error(t, err, "%s on %s", p.Name, p.Spec.NodeName)
			assert.Contains(t, err.Error(), "default/"+p.Name)
			assert.Contains(t, err.Error(), "spec.nodeName")
			assert.Contains(t, err.Error(), "node "+p.Spec.NodeName)
			require.Equal(t, before, counted(s))
		}
		require.NoError(t, s.AddNode(bigNode("n9")))
		require.Equal(t, state{}.node("n1", big, a("p1")).node("n2", big).node("n9", big, a("waiting")), counted(s), "waiting pod still kept for n9")
	})

	t.Run("terminal pods are gone", func(t *testing.T) {
		for _, phase := range []v1.PodPhase{v1.PodSucceeded, v1.PodFailed} {
			t.Run(string(phase), func(t *testing.T) {
				s := newStore()
				feed(t, s, bigNode("n1"), podA("p1", "n1"), podB("p2", "n1"), podA("p3", "n9"))
				// Never counted.
				require.NoError(t, s.AddPod(withPhase(podA("done", "n1"), phase)))
				require.NoError(t, s.UpdatePod(withPhase(podA("done2", "n1"), phase)))
				require.NoError(t, s.AddPod(withPhase(podA("unbound-done", ""), phase)))
				require.Equal(t, state{}.node("n1", big, a("p1"), b("p2")), counted(s))
				assert.False(t, s.RemovePod(podA("done", "n1")), "a terminal pod is not kept")
				// A counted pod that terminates is removed, by update or by add.
				require.NoError(t, s.UpdatePod(withPhase(podA("p1", "n1"), phase)))
				require.NoError(t, s.AddPod(withPhase(podB("p2", "n1"), phase)))
				require.Equal(t, state{}.node("n1", big), counted(s))
				assert.False(t, s.RemovePod(podA("p1", "n1")))
				// Also one kept for its node, and also when its last
				// object is stale (unbound) or its requests are bad: only
				// the key is read.
				require.NoError(t, s.UpdatePod(withPhase(MakePod("default", "p3", "", "-1", ""), phase)))
				require.NoError(t, s.AddNode(bigNode("n9")))
				require.Equal(t, state{}.node("n1", big).node("n9", big), counted(s))
			})
		}
	})

	t.Run("bad objects change nothing", func(t *testing.T) {
		s := newStore()
		feed(t, s, bigNode("n1"), podA("p1", "n1"), podA("w1", "n9"))
		before := counted(s)
		negNode := MakeNode("n1", "4", "8Gi")
		negNode.Status.Allocatable[v1.ResourceMemory] = resource.MustParse("-1Gi")
		newNeg := negNode.DeepCopy()
		newNeg.Name = "n2"
		noName := bigNode("")
		cases := []struct {
			name   string
			call   func() error
			inMsgs []string
		}{
			{"nil node add", func() error { return s.AddNode(nil) }, []string{"node"}},
			{"nil node update", func() error { return s.UpdateNode(nil) }, []string{"node"}},
			{"node without name", func() error { return s.AddNode(noName) }, []string{"metadata.name"}},
			{"known node, negative allocatable", func() error { return s.UpdateNode(negNode) }, []string{"n1", "status.allocatable"}},
			{"new node, negative allocatable", func() error { return s.AddNode(newNeg) }, []string{"n2", "status.allocatable"}},
			{"nil pod add", func() error { return s.AddPod(nil) }, []string{"pod"}},
			{"nil pod update", func() error { return s.UpdatePod(nil) }, []string{"pod"}},
			{"pod without name", func() error { return s.AddPod(podA("", "n1")) }, []string{"metadata.name"}},
			{"terminal pod without name", func() error { return s.AddPod(withPhase(podA("", "n1"), v1.PodFailed)) }, []string{"metadata.name"}},
			{"unbound pod without name", func() error { return s.AddPod(podA("", "")) }, []string{"metadata.name"}},
			// A key the API server refuses is refused whatever the kind;
			// only the key is read (the bad request is not).
			{"unbound pod, invalid namespace", func() error {
				return s.AddPod(MakePod("Bad_NS", "p1", "", "-1", ""))
			}, []string{"Bad_NS/p1", "metadata.namespace"}},
			{"unbound pod, invalid name", func() error {
				return s.UpdatePod(MakePod("default", "Bad Pod", "", "1", ""))
			}, []string{"default/Bad Pod", "metadata.name"}},
			{"terminal pod, invalid namespace", func() error {
				return s.UpdatePod(withPhase(MakePod("Bad_NS", "p1", "n1", "1", ""), v1.PodSucceeded))
			}, []string{"Bad_NS/p1", "metadata.namespace"}},
			{"bound pod, invalid namespace", func() error {
				return s.AddPod(MakePod("Bad_NS", "p3", "n1", "1", ""))
			}, []string{"Bad_NS/p3", "metadata.namespace"}},
			{"known pod, negative request", func() error {
				return s.UpdatePod(MakePod("default", "p1", "n1", "-500m", "1Gi"))
			}, []string{"default/p1", "cpu"}},
			{"known pod moving, negative request", func() error {
				return s.UpdatePod(MakePod("default", "p1", "n9", "500m", "-1Gi"))
			}, []string{"default/p1", "memory"}},
			{"kept pod, negative request", func() error {
				return s.UpdatePod(MakePod("default", "w1", "n1", "-1", ""))
			}, []string{"default/w1", "cpu"}},
			{"new pod, negative request", func() error {
				return s.AddPod(MakePod("default", "p2", "n1", "1", "-1"))
			}, []string{"default/p2", "memory"}},
		}
		for _, c := range cases {
			err := c.call()
			require.Error(t, err, c.name)
			for _, m := range c.inMsgs {
				assert.Contains(t, err.Error(), m, c.name)
			}
			require.Equal(t, before, counted(s), c.name)
		}
		require.NoError(t, s.AddNode(bigNode("n9")))
		require.Equal(t, state{}.node("n1", big, a("p1")).node("n9", big, a("w1")), counted(s))
	})

	t.Run("random", func(t *testing.T) {
		for seed := range uint64(RandomSeeds) {
			Random(t, seed, RandomSteps, map[string]Store{"store": newStore()})
			if t.Failed() {
				return
			}
		}
	})
}

// QuietNodeDeletes is implemented by a Store that is a feed dropping the
// store's not-found answer to a delete of a node it does not have (the
// kube-scheduler adapter's feed: the node's add was rejected, and counted,
// already). The suite then checks that such a delete returns nil and
// changes nothing, where for a store it expects the error. This is the
// one named difference a feed may have.
type QuietNodeDeletes interface{ QuietNodeDeletes() }

// unknownNodeDelete checks err, the result of a delete of a node s does
// not have, called name.
func unknownNodeDelete(t testing.TB, s Store, err error, name string) {
	t.Helper()
	if _, quiet := s.(QuietNodeDeletes); quiet {
		require.NoError(t, err, "delete of unknown node %s by a quiet feed", name)
		return
	}
	require.Error(t, err, "delete of unknown node %s", name)
	assert.Contains(t, err.Error(), name)
}

// RandomSeeds and RandomSteps size the random part of [Run].
const (
	RandomSeeds = 40
	RandomSteps = 250
)

// Random applies the same random sequence of steps informer events
// (seeded by seed) to every store in stores and to a reference model —
// maps of nodes and pods, with the contract written as plainly as
// possible — and after every event checks each store's result (error or
// not, RemovePod's report) and its Counted read-back against the model.
// Events draw from a few nodes and pods so that collisions are common:
// repeated adds, moves, pods before their node, nodes removed under their
// pods, unbound and terminal reports, deletes of unknown objects, and bad
// objects (negative quantities, empty names). A failure names the seed,
// the step, the store and the events so far.
func Random(t testing.TB, seed uint64, steps int, stores map[string]Store) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x1f0a3))
	m := newModel()
	var log []string
	names := slices.Sorted(maps.Keys(stores))
	for step := range steps {
		ev := m.randomEvent(r)
		log = append(log, ev.String())
		wantErr, wantRemoved := m.apply(ev)
		want := m.counted()
		for _, name := range names {
			s := stores[name]
			err, removed := ev.on(s)
			where := func() string {
				return fmt.Sprintf("seed %d step %d store %s; events:\n  %s", seed, step, name, strings.Join(log, "\n  "))
			}
			// The message is built only on failure: it holds every event.
			wantErr := wantErr
			if _, quiet := s.(QuietNodeDeletes); quiet && ev.op == opRemoveNode {
				wantErr = false
			}
			if (err != nil) != wantErr {
				t.Fatalf("error = %v, want an error: %v; %s", err, wantErr, where())
			}
			if ev.op == opRemovePod && removed != wantRemoved {
				t.Fatalf("RemovePod reported %v, want %v; %s", removed, wantRemoved, where())
			}
			if got := counted(s); !reflect.DeepEqual(want, got) {
				require.Equal(t, want, got, where())
			}
		}
	}
}

type op uint8

const (
	opAddNode op = iota
	opUpdateNode
	opRemoveNode
	opAddPod
	opUpdatePod
	opRemovePod
)

var opNames = [...]string{"AddNode", "UpdateNode", "RemoveNode", "AddPod", "UpdatePod", "RemovePod"}

type event struct {
	op   op
	node *v1.Node
	pod  *v1.Pod
}

func (e event) String() string {
	if e.node != nil {
		return fmt.Sprintf("%s(%s cpu=%s memory=%s)", opNames[e.op], e.node.Name,
			e.node.Status.Allocatable.Cpu(), e.node.Status.Allocatable.Memory())
	}
	if e.pod == nil {
		return opNames[e.op] + "(nil)"
	}
	req := e.pod.Spec.Containers[0].Resources.Requests
	return fmt.Sprintf("%s(%s/%s node=%q phase=%s cpu=%s memory=%s)", opNames[e.op], e.pod.Namespace, e.pod.Name,
		e.pod.Spec.NodeName, e.pod.Status.Phase, req.Cpu(), req.Memory())
}

// on applies e to s.
func (e event) on(s Store) (err error, removed bool) {
	switch e.op {
	case opAddNode:
		return s.AddNode(e.node), false
	case opUpdateNode:
		return s.UpdateNode(e.node), false
	case opRemoveNode:
		return s.RemoveNode(e.node), false
	case opAddPod:
		return s.AddPod(e.pod), false
	case opUpdatePod:
		return s.UpdatePod(e.pod), false
	}
	return nil, s.RemovePod(e.pod)
}

// model is the reference: the contract in a few lines of maps.
type model struct {
	nodes     map[string]Amounts // added and not removed
	pods      map[string]modelPod
	recreated int // pods given a new uid to move (randomEvent)
}

type modelPod struct {
	node string
	req  Amounts
}

func newModel() *model { return &model{nodes: map[string]Amounts{}, pods: map[string]modelPod{}} }

var (
	nodeNames = []string{"n0", "n1", "n2", "n3"}
	podNames  = []string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"}
	nsNames   = []string{"default", "team"}
)

func (m *model) randomEvent(r *rand.Rand) event {
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	switch x := r.IntN(100); {
	case x < 16:
		o := opAddNode
		if x >= 10 {
			o = opUpdateNode
		}
		cpu := int64(1+r.IntN(8)) * 1000
		mem := int64(1+r.IntN(16)) << 30
		if r.IntN(12) == 0 {
			mem = -mem
		}
		n := MakeNode(pick(nodeNames), fmt.Sprintf("%dm", cpu), fmt.Sprint(mem))
		if r.IntN(40) == 0 {
			n.Name = ""
		}
		return event{op: o, node: n}
	case x < 24:
		return event{op: opRemoveNode, node: MakeNode(pick(nodeNames), "1", "1Gi")}
	case x < 82:
		o := opAddPod
		if x >= 50 {
			o = opUpdatePod
		}
		node := pick(nodeNames)
		if r.IntN(5) == 0 {
			node = ""
		}
		cpu := fmt.Sprintf("%dm", 100*r.IntN(20))
		mem := fmt.Sprintf("%dMi", 64*r.IntN(32))
		if r.IntN(10) == 0 {
			cpu = fmt.Sprintf("-%dm", 100*(1+r.IntN(20)))
		}
		p := MakePod(pick(nsNames), pick(podNames), node, cpu, mem)
		if old, ok := m.pods[p.Namespace+"/"+p.Name]; ok && node != "" && old.node != node {
			// A move: the pod was deleted and created again, so it has a
			// new metadata.uid (the same pod on another node is an error
			// in snapshot.Cache, outside this contract).
			m.recreated++
			p.UID = types.UID(fmt.Sprintf("%s-%d", p.UID, m.recreated))
		}
		switch r.IntN(10) {
		case 0:
			p.Status.Phase = v1.PodSucceeded
		case 1:
			p.Status.Phase = v1.PodFailed
		case 2:
			p.Status.Phase = v1.PodPending
		}
		switch r.IntN(60) {
		case 0:
			p.Name = ""
		case 1:
			p.Namespace = "Bad_NS"
		}
		return event{op: o, pod: p}
	}
	return event{op: opRemovePod, pod: MakePod(pick(nsNames), pick(podNames), pick(append(nodeNames, "")), "", "")}
}

// apply applies e to the model and returns whether the store must fail
// and, for a delete, whether it must report the pod removed.
func (m *model) apply(e event) (wantErr, removed bool) {
	switch e.op {
	case opAddNode, opUpdateNode:
		alloc := e.node.Status.Allocatable
		if e.node.Name == "" || alloc.Memory().Sign() < 0 || alloc.Cpu().Sign() < 0 {
			return true, false
		}
		m.nodes[e.node.Name] = Amounts{quantity.Milli(*alloc.Cpu()), quantity.Value(*alloc.Memory())}
		return false, false
	case opRemoveNode:
		if _, ok := m.nodes[e.node.Name]; !ok {
			return true, false
		}
		delete(m.nodes, e.node.Name)
		return false, false
	case opRemovePod:
		k := e.pod.Namespace + "/" + e.pod.Name
		_, ok := m.pods[k]
		delete(m.pods, k)
		return false, ok
	}
	p := e.pod
	if p.Name == "" || p.Namespace == "Bad_NS" {
		return true, false
	}
	k := p.Namespace + "/" + p.Name
	switch {
	case p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
		delete(m.pods, k)
		return false, false
	case p.Spec.NodeName == "":
		_, known := m.pods[k]
		return known, false
	}
	req := p.Spec.Containers[0].Resources.Requests
	if req.Cpu().Sign() < 0 || req.Memory().Sign() < 0 {
		return true, false
	}
	m.pods[k] = modelPod{node: p.Spec.NodeName, req: Amounts{quantity.Milli(*req.Cpu()), quantity.Value(*req.Memory())}}
	return false, false
}

func (m *model) counted() state {
	out := state{}
	for name, alloc := range m.nodes {
		out[name] = Node{Allocatable: alloc}
	}
	for k, p := range m.pods {
		n, ok := out[p.node]
		if !ok {
			continue
		}
		n.Requested = n.Requested.add(p.req)
		n.Pods = append(n.Pods, k)
		n.NumPods++
		out[p.node] = n
	}
	for name, n := range out {
		slices.Sort(n.Pods)
		out[name] = n
	}
	return out
}
