package kubescheduler

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// ReserveName is the name of the reserve plugin [NewSchedkitReserve] builds.
const ReserveName = "SchedkitReserve"

var (
	_ fwk.ReservePlugin  = (*ReservePlugin)(nil)
	_ fwk.PostBindPlugin = (*ReservePlugin)(nil)
)

// ReservePlugin keeps a schedkit [reserve.Ledger] in step with the
// scheduler: Reserve holds the pod's request on the chosen node (and fails
// the cycle, Unschedulable with upstream's "Insufficient <resource>"
// reasons, if the ledger — which also counts named reservations — says it
// does not fit), Unreserve drops the hold (idempotent, valid for a pod never
// reserved: upstream's contract), PostBind confirms it. The ledger learns
// nodes and bound pods from the scheduler's informers.
//
// Reserve costs O(resources of the pod) plus parsing the pod; Unreserve and
// PostBind are O(1). Safe for concurrent use (the ledger has one mutex).
type ReservePlugin struct {
	name   string
	ledger *reserve.Ledger
	handle fwk.Handle
}

// WrapLedger makes a schedkit [reserve.Ledger] (yours, e.g. with named
// reservations or a journal) an upstream Reserve + PostBind plugin called
// name, for the scheduler behind h. If h has a SharedInformerFactory, node
// and pod event handlers that feed the ledger are registered on it (call
// it from a plugin factory: before the factory starts). The profile's
// built-in fit filter and schedkit score plugins then read the ledger too
// (see [FilterPlugin], [ScorePlugin]); one ledger per profile.
func WrapLedger(name string, ledger *reserve.Ledger, h fwk.Handle) (*ReservePlugin, error) {
	p := &ReservePlugin{name: name, ledger: ledger, handle: h}
	if h != nil && h.SharedInformerFactory() != nil {
		if err := feedLedger(ledger, h); err != nil {
			return nil, err
		}
	}
	if h != nil {
		mirrorFor(h).ledger.Store(ledger)
	}
	return p, nil
}

// NewReservePlugin is [WrapLedger].
//
// Deprecated: use WrapLedger, named for what it does.
func NewReservePlugin(name string, ledger *reserve.Ledger, h fwk.Handle) (*ReservePlugin, error) {
	return WrapLedger(name, ledger, h)
}

// Name returns the plugin name.
func (p *ReservePlugin) Name() string { return p.name }

// Ledger returns the ledger the plugin keeps.
func (p *ReservePlugin) Ledger() *reserve.Ledger { return p.ledger }

// Reserve holds pod on nodeName in the ledger.
func (p *ReservePlugin) Reserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	pi, err := snapshot.NewPodInfo(pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	reasons, err := p.ledger.Reserve(pi, nodeName)
	if errors.Is(err, reserve.ErrNodeNotFound) && p.handle != nil && p.handle.SnapshotSharedLister() != nil {
		// The scheduler's cache saw the node before the ledger's informer
		// handler did: take it from the scheduler's snapshot and retry.
		if ni, gerr := p.handle.SnapshotSharedLister().NodeInfos().Get(nodeName); gerr == nil && ni.Node() != nil {
			if aerr := p.ledger.AddNode(ni.Node()); aerr != nil {
				return fwk.AsStatus(aerr)
			}
			reasons, err = p.ledger.Reserve(pi, nodeName)
		}
	}
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("kubescheduler: %s: %w", p.name, err))
	}
	if len(reasons) > 0 {
		return fwk.NewStatus(fwk.Unschedulable, insufficientMessages(reasons)...)
	}
	return nil
}

// insufficientMessages are upstream's reason strings for the ledger's
// reasons ("Too many pods", "Insufficient cpu", ...).
func insufficientMessages(reasons []reserve.Insufficient) []string {
	msgs := make([]string, len(reasons))
	for i, r := range reasons {
		msgs[i] = r.Message()
	}
	return msgs
}

// Unreserve drops the pod's hold; a no-op for a pod never reserved.
func (p *ReservePlugin) Unreserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) {
	p.ledger.Unreserve(snapshot.KeyOf(pod))
}

// PostBind confirms the hold: the bind succeeded.
func (p *ReservePlugin) PostBind(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) {
	// ErrNotHeld: the informer already reported the pod bound, or deleted it.
	_ = p.ledger.Confirm(snapshot.KeyOf(pod))
}

// NewSchedkitReserve is the factory of the [ReserveName] plugin, which
// keeps a new, empty ledger; it takes no args. Upstream's PluginFactory
// signature:
// app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewSchedkitReserve).
// For a ledger of your own use [WrapLedger].
func NewSchedkitReserve(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var args struct{}
	if err := DecodeArgs(ReserveName, obj, &args); err != nil {
		return nil, err
	}
	return WrapLedger(ReserveName, reserve.New(), h)
}

// NewReserve is [NewSchedkitReserve].
//
// Deprecated: use NewSchedkitReserve, named for what it builds.
func NewReserve(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	return NewSchedkitReserve(ctx, obj, h)
}

// feedLedger registers informer handlers that report nodes and bound pods
// to the ledger.
func feedLedger(l *reserve.Ledger, h fwk.Handle) error {
	f := h.SharedInformerFactory()
	_, err := f.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { addNode(l, obj) },
		UpdateFunc: func(_, obj any) { addNode(l, obj) },
		DeleteFunc: func(obj any) {
			if n, ok := tombstone(obj).(*v1.Node); ok {
				_ = l.RemoveNode(n.Name) // unknown node: nothing to do
			}
		},
	})
	if err != nil {
		return err
	}
	_, err = f.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { addPod(l, obj) },
		UpdateFunc: func(_, obj any) { addPod(l, obj) },
		DeleteFunc: func(obj any) {
			if p, ok := tombstone(obj).(*v1.Pod); ok {
				l.RemovePod(snapshot.KeyOf(p))
			}
		},
	})
	return err
}

func addNode(l *reserve.Ledger, obj any) {
	if n, ok := obj.(*v1.Node); ok {
		_ = l.AddNode(n) // invalid objects are the API server's to reject; the ledger keeps its state
	}
}

func addPod(l *reserve.Ledger, obj any) {
	p, ok := obj.(*v1.Pod)
	if !ok || p.Spec.NodeName == "" {
		return
	}
	if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		l.RemovePod(snapshot.KeyOf(p)) // terminated pods free their node, as in upstream's cache
		return
	}
	_ = l.AddPod(p)
}

// tombstone unwraps the object of a delete event the informer missed.
func tombstone(obj any) any {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		return t.Obj
	}
	return obj
}
