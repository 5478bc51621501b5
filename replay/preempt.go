package replay

import (
	"context"
	"fmt"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// preemptionEvicter returns the Loop's EvictFunc for Config.Preemption:
// it evicts the victims from the ledger (reserve.Ledger.Evict: all or
// none) and accounts for them: rep's eviction counts (by the victim's
// priority), the timeline, and for a victim that was an arrival
// rep.EvictedPlaced, its departure (placedOn cleared, so a later
// departure event is a no-op) and its share of the allocated demand
// (unallocate). On error nothing is
// evicted. It also makes rep's by-priority maps.
func preemptionEvicter(in *Input, ledger *reserve.Ledger, rep *Report, tl *timeline, placedOn []string, unallocate func(gpushare.Task)) framework.EvictFunc {
	rep.PreemptionsByPriority, rep.EvictedByPriority = map[int32]int{}, map[int32]int{}
	var arrival map[snapshot.PodKey]int // arrival index by key, made at the first eviction
	return func(_ context.Context, node string, victims []*snapshot.PodInfo) error {
		keys := make([]snapshot.PodKey, len(victims))
		prios := make([]int32, len(victims))
		classes := ledger.Snapshot()
		for i, v := range victims {
			keys[i] = v.Key()
			p := v.Template() // no rebuild of a lean record's pod
			if p.Spec.Priority == nil && p.Spec.PriorityClassName != "" {
				p = v.Pod() // an error names the pod
			}
			prio, err := framework.PodPriority(p, classes)
			if err != nil {
				return fmt.Errorf("replay: evicting pod %s: %w", v.Key(), err)
			}
			prios[i] = prio
		}
		if err := ledger.Evict(node, keys); err != nil {
			return err
		}
		if arrival == nil {
			arrival = make(map[snapshot.PodKey]int, len(in.Arrivals))
			for i, a := range in.Arrivals {
				arrival[a.Pod.Key()] = i
			}
		}
		for i, v := range victims {
			rep.Evicted++
			rep.EvictedByPriority[prios[i]]++
			t := gpushare.TaskOf(v)
			tl.remove(t, node)
			if i, ok := arrival[v.Key()]; ok {
				rep.EvictedPlaced++
				placedOn[i] = ""
				unallocate(t)
			}
		}
		return nil
	}
}
