package score

import (
	"github.com/schedkit/schedkit/internal/scoring"

	"github.com/schedkit/schedkit/snapshot"
)

// isNodeLocal reports whether s keeps internal/scoring's NodeLocal promise
// (its scores may be cached per node and shared between pods with the
// same spec, by framework's equivalence cache): the built-in scorers do,
// except PerNode's (an arbitrary function); a custom scorer (gpushare's
// policy scorers among them) says so with a method NodeLocal() bool
// returning true. Exactly these types: one embedding a built-in scorer
// may read anything else, and does not inherit the promise.
func isNodeLocal(s Scorer) bool {
	switch s.(type) {
	case *leastAllocated, *mostAllocated, *requestedToCapacityRatio, *balancedAllocation,
		*imageLocality,
		*taintToleration, *nodeAffinity, *binPack, *dominantResource, *tetris:
		return true
	}
	return scoring.IsNodeLocal(s)
}

// profileNodeLocal is scoring.ProfileNodeLocal.
func profileNodeLocal(p any) bool {
	for _, e := range p.(*Profile).entries {
		if !isNodeLocal(e.Scorer) {
			return false
		}
	}
	return true
}

// prepareProfile is scoring.Prepare.
func prepareProfile(p any, pod *snapshot.PodInfo, cluster any) (scoring.PodProfile, error) {
	c, _ := cluster.(Cluster) // nil stays nil
	pp, err := p.(*Profile).prepareFor(pod, c)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return pp, nil
}

func init() {
	scoring.Prepare = prepareProfile
	scoring.ProfileNodeLocal = profileNodeLocal
}
