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

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/internal/mirror"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// ReservePlugin holds pods in a [reserve.Ledger] at Reserve, drops holds at
// Unreserve, confirms them at PostBind; informers feed it ([mirror.Feed]),
// and an event it rejects is logged and counted.
type ReservePlugin struct {
	name   string
	ledger *reserve.Ledger
	handle fwk.Handle
	m      *nodeMirror // holds the profile's mirror, which reads the ledger, alive
	errs   atomic.Int64
}

// WrapLedger makes ledger a plugin called name; the profile's built-in fit
// filter and schedkit scorers then read it too (one ledger per profile).
func WrapLedger(name string, ledger *reserve.Ledger, h fwk.Handle) (*ReservePlugin, error) {
	return wrapLedger(klog.Background(), name, ledger, h)
}

func wrapLedger(log klog.Logger, name string, ledger *reserve.Ledger, h fwk.Handle) (*ReservePlugin, error) {
	p := &ReservePlugin{name: name, ledger: ledger, handle: h, m: mirrorFor(h)}
	feed := func(obj any, deleted bool) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if err := mirror.Feed(ledger, obj, deleted); err != nil {
			p.errs.Add(1)
			log.Error(err, "ledger rejected an informer event; it keeps its state", "plugin", name)
		}
	}
	if h != nil && h.SharedInformerFactory() != nil {
		f := h.SharedInformerFactory().Core().V1()
		for _, inf := range []cache.SharedIndexInformer{f.Nodes().Informer(), f.Pods().Informer()} {
			if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { feed(obj, false) },
				UpdateFunc: func(_, obj any) { feed(obj, false) },
				DeleteFunc: func(obj any) { feed(obj, true) },
			}); err != nil {
				return nil, err
			}
		}
	}
	p.m.SetLedger(ledger)
	return p, nil
}

// NewSchedkitReserve is the factory of the [ReserveName] plugin (no args); GPU-share pods get BestFit's devices.
func NewSchedkitReserve(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
	if err := DecodeArgs(ReserveName, obj, &struct{}{}); err != nil {
		return nil, err
	}
	return wrapLedger(klog.FromContext(ctx), ReserveName, reserve.New(reserve.WithDeviceDecoder(mirror.Devices), reserve.WithDeviceChooser(gpushare.BestFit{})), h)
}

// Name returns the plugin name.
func (p *ReservePlugin) Name() string { return p.name }

// Ledger returns the ledger the plugin keeps.
func (p *ReservePlugin) Ledger() *reserve.Ledger { return p.ledger }

// InformerErrors is the number of informer events the ledger rejected.
func (p *ReservePlugin) InformerErrors() int64 { return p.errs.Load() }

// Reserve holds pod on nodeName (taking the node from the scheduler if need be).
func (p *ReservePlugin) Reserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	pi, err := snapshot.DecodePodInfo(pod, p.ledger.Snapshot().DeviceDecoder())
	if err != nil {
		return fwk.AsStatus(err)
	}
	short, err := p.ledger.Reserve(pi, nodeName)
	if errors.Is(err, reserve.ErrNodeNotFound) && p.handle != nil && p.handle.SnapshotSharedLister() != nil {
		if ni, gerr := p.handle.SnapshotSharedLister().NodeInfos().Get(nodeName); gerr == nil && ni.Node() != nil {
			if err = p.ledger.AddNode(ni.Node()); err == nil {
				short, err = p.ledger.Reserve(pi, nodeName)
			}
		}
	}
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("kubescheduler: %s: %w", p.name, err))
	}
	return status(mirror.Reasons(short))
}

// Unreserve drops the pod's hold; a no-op for a pod never reserved.
func (p *ReservePlugin) Unreserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) {
	p.ledger.Unreserve(snapshot.KeyOf(pod))
}

// PostBind confirms the hold; an error but ErrNotHeld (the informer was
// first) is logged: ErrJournal, the ledger's journal broke.
func (p *ReservePlugin) PostBind(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeName string) {
	if err := p.ledger.Confirm(snapshot.KeyOf(pod)); err != nil && !errors.Is(err, reserve.ErrNotHeld) {
		klog.FromContext(ctx).Error(err, "ledger could not confirm a bound pod", "plugin", p.name, "pod", klog.KObj(pod))
	}
}
