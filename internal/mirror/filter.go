package mirror

import (
	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// Filtering is a filter prepared for one pod by [Mirror.Filter]. Immutable;
// safe for concurrent use.
type Filtering[N comparable] struct {
	m      *Mirror[N]
	pf     framework.PodFilter // nil: the pod passes everywhere
	pod    *snapshot.PodInfo
	ledger *reserve.Ledger // nil: no ledger check
}

// Filter prepares f for pod and returns f's PreFilterResult as it is (the
// caller maps Reject and NodeNames). With withLedger and a ledger set, a
// node f passes is also checked with [reserve.Ledger.Fits] (holds, and
// named reservations on which their owners draw), so the filter never
// passes a node the ledger would refuse at Reserve. Errors: f's.
func (m *Mirror[N]) Filter(f framework.Filter, pod *snapshot.PodInfo, withLedger bool) (*Filtering[N], framework.PreFilterResult, error) {
	pre, err := f.PreFilter(pod)
	if err != nil {
		return nil, pre, err
	}
	fl := &Filtering[N]{m: m, pf: pre.Filter, pod: pod}
	if withLedger {
		fl.ledger = m.Ledger()
	}
	return fl, pre, nil
}

// Check returns why n cannot run the pod, as framework reasons with
// upstream's messages ([framework.Reason.Message]); nil when it can. It
// asks the processor for the next listed node's head (the lines a
// resource filter reads): a host that filters its nodes in list order
// (upstream's workers take consecutive chunks) then finds it in cache. An
// entry altered for this call (nominated pods added, preemption victims
// removed) is converted and judged on its own pods, without the ledger,
// which cannot take the victims out; so is a node the ledger does not know
// yet. A passing node unchanged since it was mirrored costs a look-up and
// the filter's check (plus Ledger.Fits, under its mutex) and allocates
// nothing; a changed one is first refreshed ([Mirror.Lookup]). Errors: n
// does not convert.
func (f *Filtering[N]) Check(n N) ([]framework.Reason, error) {
	if f.pf == nil {
		return nil, nil
	}
	ours, p := f.m.lookup(n)
	mirrored := ours != nil
	if mirrored {
		f.m.prefetchHead(p + 1)
	} else {
		var err error
		if ours, err = f.m.Convert(n); err != nil {
			return nil, err
		}
	}
	if reasons := f.pf.Filter(ours, nil); len(reasons) > 0 || f.ledger == nil || !mirrored {
		return reasons, nil
	}
	short, err := f.ledger.Fits(f.pod, ours.Name())
	if err != nil {
		return nil, nil // a node the ledger has not seen yet
	}
	return Reasons(short), nil
}

// Reasons converts the ledger's shortfalls to framework reasons
// (CodeTooManyPods for pods, else CodeInsufficientResource), whose
// Message is upstream's ("Too many pods", "Insufficient cpu"); nil for
// none. O(len(short)).
func Reasons(short []reserve.Insufficient) []framework.Reason {
	var reasons []framework.Reason
	for _, s := range short {
		r := framework.Reason{Code: framework.CodeInsufficientResource, Insufficient: s}
		if s.Resource == snapshot.Pods {
			r.Code = framework.CodeTooManyPods
		}
		reasons = append(reasons, r)
	}
	return reasons
}
