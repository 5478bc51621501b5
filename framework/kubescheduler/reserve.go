package kubescheduler

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
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

// ReservePlugin keeps a [reserve.Ledger] in step with the scheduler:
// Reserve holds the pod's request on the chosen node (Unschedulable, with
// upstream's "Insufficient <resource>" reasons, if the ledger refuses),
// Unreserve drops the hold (idempotent, valid for a pod never reserved),
// PostBind confirms it. The ledger learns nodes and pods from the
// scheduler's informers; an event the ledger rejects is logged and counted
// ([ReservePlugin.InformerErrors]). Reserve is O(resources of the pod) plus
// parsing it; Unreserve and PostBind O(1). Safe for concurrent use.
type ReservePlugin struct {
	name   string
	ledger *reserve.Ledger
	handle fwk.Handle
	p      *profile
	log    klog.Logger
	errs   atomic.Int64
}

// WrapLedger makes ledger an upstream Reserve + PostBind plugin called name,
// for the scheduler behind h, and feeds it node and pod events from h's
// SharedInformerFactory, if any (call it from a plugin factory, before the
// factory starts). The profile's built-in fit filter and schedkit scorers
// then read the ledger too; one ledger per profile.
func WrapLedger(name string, ledger *reserve.Ledger, h fwk.Handle) (*ReservePlugin, error) {
	return wrapLedger(klog.Background(), name, ledger, h)
}

func wrapLedger(log klog.Logger, name string, ledger *reserve.Ledger, h fwk.Handle) (*ReservePlugin, error) {
	rp := &ReservePlugin{name: name, ledger: ledger, handle: h, p: profileFor(h), log: log.WithValues("plugin", name)}
	if h != nil && h.SharedInformerFactory() != nil {
		f := h.SharedInformerFactory().Core().V1()
		if _, err := f.Nodes().Informer().AddEventHandler(rp.handler(rp.onNode)); err != nil {
			return nil, err
		}
		if _, err := f.Pods().Informer().AddEventHandler(rp.handler(rp.onPod)); err != nil {
			return nil, err
		}
	}
	rp.p.m.SetLedger(ledger)
	return rp, nil
}

// Name returns the plugin name.
func (p *ReservePlugin) Name() string { return p.name }

// Ledger returns the ledger the plugin keeps.
func (p *ReservePlugin) Ledger() *reserve.Ledger { return p.ledger }

// InformerErrors is the number of informer events the ledger rejected (an
// invalid node or pod: the ledger kept its state), each also logged.
func (p *ReservePlugin) InformerErrors() int64 { return p.errs.Load() }

// Reserve holds pod on nodeName in the ledger.
func (p *ReservePlugin) Reserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	pi, err := snapshot.NewPodInfo(pod)
	if err != nil {
		return fwk.AsStatus(err)
	}
	reasons, err := p.ledger.Reserve(pi, nodeName)
	if errors.Is(err, reserve.ErrNodeNotFound) && p.handle != nil && p.handle.SnapshotSharedLister() != nil {
		// The scheduler saw the node before the ledger's informer handler:
		// take it from the scheduler's snapshot and retry.
		if ni, gerr := p.handle.SnapshotSharedLister().NodeInfos().Get(nodeName); gerr == nil && ni.Node() != nil {
			if err = p.ledger.AddNode(ni.Node()); err == nil {
				reasons, err = p.ledger.Reserve(pi, nodeName)
			}
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

// insufficientMessages are upstream's reasons ("Too many pods",
// "Insufficient cpu", ...) for the ledger's.
func insufficientMessages(reasons []reserve.Insufficient) []string {
	msgs := make([]string, len(reasons))
	for i, r := range reasons {
		msgs[i] = "Insufficient " + r.Resource.String()
		if r.Resource == snapshot.Pods {
			msgs[i] = "Too many pods"
		}
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

// NewSchedkitReserve is the factory of the [ReserveName] plugin, keeping a
// new ledger; it takes no args:
// app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewSchedkitReserve).
func NewSchedkitReserve(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	var args struct{}
	if err := DecodeArgs(ReserveName, obj, &args); err != nil {
		return nil, err
	}
	return wrapLedger(klog.FromContext(ctx), ReserveName, reserve.New(), h)
}

// handler passes an informer's events to on (obj, deleted), unwrapping
// tombstones.
func (p *ReservePlugin) handler(on func(obj any, deleted bool) error) cache.ResourceEventHandlerFuncs {
	report := func(obj any, deleted bool) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if err := on(obj, deleted); err != nil {
			p.errs.Add(1)
			p.log.Error(err, "ledger rejected an informer event; it keeps its state")
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { report(obj, false) },
		UpdateFunc: func(_, obj any) { report(obj, false) },
		DeleteFunc: func(obj any) { report(obj, true) },
	}
}

// onNode reports a node event to the ledger; deleting a node it does not
// know is no error (its add was rejected and counted).
func (p *ReservePlugin) onNode(obj any, deleted bool) error {
	n, ok := obj.(*v1.Node)
	switch {
	case !ok:
		return fmt.Errorf("kubescheduler: node informer: unexpected object %T", obj)
	case !deleted:
		return p.ledger.AddNode(n)
	}
	if err := p.ledger.RemoveNode(n.Name); !errors.Is(err, reserve.ErrNodeNotFound) {
		return err
	}
	return nil
}

// onPod reports a pod event to the ledger (which ignores pending pods and
// frees terminal ones: its informer contract).
func (p *ReservePlugin) onPod(obj any, deleted bool) error {
	pod, ok := obj.(*v1.Pod)
	switch {
	case !ok:
		return fmt.Errorf("kubescheduler: pod informer: unexpected object %T", obj)
	case deleted:
		p.ledger.RemovePod(snapshot.KeyOf(pod))
		return nil
	}
	return p.ledger.AddPod(pod)
}
