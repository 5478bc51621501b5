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
		if _, cond := e.Scorer.(scoring.PodNodeLocal); !cond && !isNodeLocal(e.Scorer) {
			return false
		}
	}
	return true
}

// isPodNodeLocal reports whether s is node-local only for some pods
// (scoring.PodNodeLocal, and not node-local in general): the scorers
// profileNodeLocalFor asks.
func isPodNodeLocal(s Scorer) bool {
	_, ok := s.(scoring.PodNodeLocal)
	return ok && !isNodeLocal(s)
}

// profileNodeLocalFor is scoring.ProfileNodeLocalFor.
func profileNodeLocalFor(p any, pod *snapshot.PodInfo, cluster any) bool {
	for _, e := range p.(*Profile).entries {
		if isPodNodeLocal(e.Scorer) && !e.Scorer.(scoring.PodNodeLocal).NodeLocalFor(pod, cluster) {
			return false
		}
	}
	return true
}

// prepareProfile is scoring.Prepare.
func prepareProfile(p any, pod *snapshot.PodInfo, cluster any, local bool) (scoring.PodProfile, error) {
	c, _ := cluster.(Cluster) // nil stays nil
	pp, err := p.(*Profile).prepareFor(pod, c, local)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return pp, nil
}

// scoreLocal is scoring.ScoreLocal.
func scoreLocal(p any, pod *snapshot.PodInfo, cluster any, nodes []*snapshot.NodeInfo, totals []int64) error {
	c, _ := cluster.(Cluster)
	return p.(*Profile).score(pod, c, nodes, totals, true)
}

// ignoresCluster is scoring.IgnoresCluster.
func ignoresCluster(s any) bool {
	switch s := s.(type) {
	case *leastAllocated, *mostAllocated, *requestedToCapacityRatio, *balancedAllocation,
		*taintToleration, *nodeAffinity, *binPack, *dominantResource, *tetris:
		return true
	case *Profile:
		for _, e := range s.entries {
			if !ignoresCluster(e.Scorer) {
				return false
			}
		}
		return true
	}
	return false
}

func init() {
	scoring.IgnoresCluster = ignoresCluster
	scoring.Prepare = prepareProfile
	scoring.ScoreLocal = scoreLocal
	scoring.ProfileNodeLocal = profileNodeLocal
	scoring.ProfileNodeLocalFor = profileNodeLocalFor
}

// Parts of a profile for framework's shared request shapes
// (scoring.PodProfile.Split): what a built-in scorer's scores of a node
// depend on besides the pod.
const (
	partOther    = iota // anything else (or unknown: a custom scorer)
	partNode            // the node object alone, not the node's pods
	partRequests        // the pod's requests and the node's allocatable and requested amounts alone
)

// scorerPart returns s's part: ImageLocality, TaintToleration and
// NodeAffinity read the node object (images, taints, labels; image
// spread changes only with the node set); LeastAllocated, MostAllocated,
// RequestedToCapacityRatio and BalancedAllocation read the pod's requests
// and the node's amounts. Exactly these types.
func scorerPart(s Scorer) int {
	switch s.(type) {
	case *imageLocality, *taintToleration, *nodeAffinity:
		return partNode
	case *leastAllocated, *mostAllocated, *requestedToCapacityRatio, *balancedAllocation:
		return partRequests
	}
	return partOther
}
