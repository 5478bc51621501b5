package gpushare

import "math/rand/v2"

// Random is the Random-fit baseline of the paper's evaluation (the
// simulator's RandomScore with gpuSelMethod=random, pkg/simulator/plugin/random_score.go
// and open_gpu_share.go): a node drawn uniformly among the nodes the task
// fits, and for a shared task a device drawn uniformly among the devices
// that can host it; whole-device tasks get ExclusiveDevices.
//
// Randomness comes only from the caller's seed. A Random is not safe for
// concurrent use.
type Random struct {
	rng *rand.Rand
}

var _ Policy = (*Random)(nil)

// NewRandom returns a Random policy drawing from a PCG generator seeded
// with seed.
func NewRandom(seed uint64) *Random {
	return &Random{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Name returns "Random".
func (*Random) Name() string { return "Random" }

// Choose draws a node among those t fits and the devices; Decision.Node is
// -1 when t fits no node (no number is drawn then). Decision.Score is
// MaxScore for the chosen node. O(nodes × devices); allocates nothing.
func (r *Random) Choose(nodes []NodeState, t Task) Decision {
	feasible := 0
	for i := range nodes {
		if Fits(&nodes[i], t) {
			feasible++
		}
	}
	if feasible == 0 {
		return Decision{Node: -1}
	}
	k := r.rng.IntN(feasible)
	for i := range nodes {
		if !Fits(&nodes[i], t) {
			continue
		}
		if k > 0 {
			k--
			continue
		}
		return Decision{Node: i, Devices: r.devices(&nodes[i], t), Score: MaxScore}
	}
	return Decision{Node: -1} // unreachable: feasible > 0
}

// devices picks t's devices on n: uniform among hosting devices for a
// shared task (one draw), ExclusiveDevices otherwise.
func (r *Random) devices(n *NodeState, t Task) DeviceSet {
	if !t.Shared() {
		s, _ := ExclusiveDevices(n, t)
		return s
	}
	k := r.rng.IntN(usableDevices(n, &t))
	devs := n.devices()
	for i := range devs {
		if !hosts(&devs[i], &t) {
			continue
		}
		if k == 0 {
			return DeviceSet(0).With(i)
		}
		k--
	}
	return 0
}
