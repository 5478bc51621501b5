package reserve

import (
	"fmt"

	"github.com/schedkit/schedkit/snapshot"
)

// Evict applies a preemption's evictions to the ledger: it checks that
// every victim is recorded on node (held, confirmed or bound) and appears
// once, then removes them as [Ledger.RemovePod] does, freeing at once what
// each held (framework's Preemption gives node and victims; in a cluster
// the informer's delete events do the same later). On error nothing is
// removed; errors wrap [ErrInvalid] (a duplicate or empty key) or
// [ErrNotHeld] (a victim not on node), naming the pod.
//
// The check and the removals each take the ledger's lock; an informer
// event for a victim between them is applied first (a deleted victim is
// then a no-op). O(victims × pods on node).
func (l *Ledger) Evict(node string, victims []snapshot.PodKey) error {
	seen := make(map[snapshot.PodKey]bool, len(victims))
	for _, k := range victims {
		if k.Name == "" || seen[k] {
			return fmt.Errorf("reserve: Ledger.Evict: victim %q: empty or repeated key: %w", k, ErrInvalid)
		}
		seen[k] = true
		switch _, n, ok := l.PodPhase(k); {
		case !ok:
			return fmt.Errorf("reserve: Ledger.Evict: victim %s is not in the ledger: %w", k, ErrNotHeld)
		case n != node:
			return fmt.Errorf("reserve: Ledger.Evict: victim %s is not on node %q (it is on %q): %w", k, node, n, ErrNotHeld)
		}
	}
	for _, k := range victims {
		l.RemovePod(k)
	}
	return nil
}
