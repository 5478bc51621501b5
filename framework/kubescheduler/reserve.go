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

// ReserveName is the name of the reserve plugin NewReserve builds.
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

// NewReservePlugin returns a reserve plugin called name over ledger. If h
// has a SharedInformerFactory, node and pod event handlers that feed the
// ledger are registered on it (call before the factory starts, as plugin
// factories are).
func NewReservePlugin(name string, ledger *reserve.Ledger, h fwk.Handle) (*ReservePlugin, error) {
	p := &ReservePlugin{name: name, ledger: ledger, handle: h}
	if h != nil && h.SharedInformerFactory() != nil {
		if err := feedLedger(ledger, h); err != nil {
			return nil, err
		}
	}
	return p, nil
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
		msgs := make([]string, len(reasons))
		for i, r := range reasons {
			if r.Resource == snapshot.Pods {
				msgs[i] = "Too many pods"
			} else {
				msgs[i] = "Insufficient " + r.Resource.String()
			}
		}
		return fwk.NewStatus(fwk.Unschedulable, msgs...)
	}
	return nil
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

// NewReserve builds the ReserveName plugin with a new ledger; it takes no
// args. Upstream's PluginFactory signature:
// app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewReserve).
func NewReserve(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var args struct{}
	if err := decodeArgs(ReserveName, obj, &args); err != nil {
		return nil, err
	}
	return NewReservePlugin(ReserveName, reserve.New(), h)
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
