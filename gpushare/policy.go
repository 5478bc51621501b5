package gpushare

// NodeScorer is a policy's device-level formula: it scores placing a task
// on one NodeState and names the devices it would use. Score returns a
// value in [0, MaxScore] (higher is better) and the chosen devices (empty
// for CPU-only tasks); it returns (0, 0) when t does not fit n (see Fits).
// Implementations are pure: they read n and t only.
//
// It is the paper's level, over NodeStates; a scheduler uses a policy
// through [NewScorer], which makes it a score.Scorer over snapshot nodes
// (the library's one scorer vocabulary) and a snapshot.DeviceChooser.
type NodeScorer interface {
	// Name returns the policy's name as in the paper (e.g. "FGD").
	Name() string
	// Score scores t on n and picks its devices.
	Score(n *NodeState, t Task) (score int64, devices DeviceSet)
}

// Policy chooses a node and devices for a task: a node scorer plus the
// selection rule, or a policy that is not a per-node score (Random).
type Policy interface {
	// Name returns the policy's name as in the paper (e.g. "FGD").
	Name() string
	// Choose picks among nodes for t.
	Choose(nodes []NodeState, t Task) Decision
}

// Decision is the outcome of a Policy: the index of the chosen node in the
// nodes slice given to Choose (-1 when t fits no node), the devices to use on
// it (empty for CPU-only tasks) and the node's score.
type Decision struct {
	Node    int
	Devices DeviceSet
	Score   int64
}

// Choose returns the node of highest s.Score among the nodes that t fits
// (Fits), with its devices. Ties go to the lowest index: callers reproduce a
// tie-break rule by ordering nodes (the FGD simulator's scheduler breaks ties
// by smallest node name; upstream kube-scheduler picks uniformly among the
// tied nodes). Decision.Node is -1 when t fits no node.
// O(nodes × cost of s.Score); allocates nothing itself.
func Choose(s NodeScorer, nodes []NodeState, t Task) Decision {
	best := Decision{Node: -1}
	for i := range nodes {
		if !Fits(&nodes[i], t) {
			continue
		}
		score, devs := s.Score(&nodes[i], t)
		if best.Node < 0 || score > best.Score {
			best = Decision{Node: i, Devices: devs, Score: score}
		}
	}
	return best
}
