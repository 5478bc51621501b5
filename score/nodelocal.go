package score

// NodeLocal is implemented by a [Scorer] whose results may be cached per
// node and shared between pods with the same spec — what framework's
// equivalence cache needs (the idea of Borg's equivalence classes and
// score caching: Verma et al., "Large-scale cluster management at Google
// with Borg", EuroSys 2015, §3.4). NodeLocal() returns true to promise:
//
//   - for two pods with equal specs — the v1.PodSpec, the requests
//     snapshot.PodInfo derives (which for a pod resized in place also
//     depend on its status) and the GPU request it parses from
//     annotations — Prepare returns scorers that give every node the same
//     raw scores;
//   - a node's raw score depends only on those, that node's NodeInfo, and
//     cluster-wide data that changes only with the node set (the node-set
//     version, layout.View.NodeSetVersion: NumNodes, ImageNumNodes) — not on other nodes' pods,
//     the pod's name, namespace, labels, other annotations or other status
//     fields, a clock or a random source;
//   - Normalize depends only on the nodes and raw scores it is given.
//
// A wrapper can forward its inner scorer's answer. All built-in scorers
// are NodeLocal except [PerNode] (an arbitrary function); so are the
// gpushare package's policy scorers, except its RandomScorer (it hashes
// the pod's name). Beware of embedding: a type that
// embeds a built-in scorer inherits its NodeLocal method, and with it the
// promise; override it (return false) if the type reads anything else.
type NodeLocal interface {
	NodeLocal() bool
}

func isNodeLocal(s Scorer) bool {
	nl, ok := s.(NodeLocal)
	return ok && nl.NodeLocal()
}

// NodeLocal reports true: see [NodeLocal].
func (*LeastAllocated) NodeLocal() bool { return true }

// NodeLocal reports true: see [NodeLocal].
func (*MostAllocated) NodeLocal() bool { return true }

// NodeLocal reports true: see [NodeLocal].
func (*RequestedToCapacityRatio) NodeLocal() bool { return true }

// NodeLocal reports true: see [NodeLocal].
func (*BalancedAllocation) NodeLocal() bool { return true }

// NodeLocal reports true: see [NodeLocal]. The image spread it reads
// changes only with the node set.
func (*ImageLocality) NodeLocal() bool { return true }

// NodeLocal reports true: see [NodeLocal].
func (*TaintToleration) NodeLocal() bool { return true }

// NodeLocal reports true: see [NodeLocal].
func (*NodeAffinity) NodeLocal() bool { return true }

// NodeLocal reports true: see [NodeLocal].
func (*BinPack) NodeLocal() bool { return true }

// NodeLocal reports true: see [NodeLocal].
func (*DominantResource) NodeLocal() bool { return true }

// NodeLocal reports true: see [NodeLocal].
func (*DotProduct) NodeLocal() bool { return true }
