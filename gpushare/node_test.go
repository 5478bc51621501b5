package gpushare

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFits(t *testing.T) {
	tests := []struct {
		name string
		node NodeState
		task Task
		want bool
	}{
		{"cpu-only fits", node(4000, nil), cpuOnly(4000), true},
		{"cpu-only lacks cpu", node(3999, nil), cpuOnly(4000), false},
		{"memory lacks", NodeState{FreeMilliCPU: 4000, FreeMemory: 10}, Task{MilliCPU: 1, Memory: 11}, false},
		{"zero request on over-committed node", NodeState{FreeMilliCPU: -5, FreeMemory: -5}, Task{}, true},
		{"share fits partly used device", node(4000, gpus("T4", 0, 500)), shared(1000, 500), true},
		{"share too big", node(4000, gpus("T4", 499, 499)), shared(1000, 500), false},
		{"two whole GPUs", node(4000, gpus("T4", 1000, 999, 1000)), whole(1000, 2), true},
		{"two whole GPUs, one idle", node(4000, gpus("T4", 1000, 999)), whole(1000, 2), false},
		{"model allowed", node(4000, gpus("T4", 1000)), Task{MilliCPU: 1, GPUCount: 1, MilliGPU: 500, Models: []string{"P100", "T4"}}, true},
		{"model not allowed", node(4000, gpus("T4", 1000)), Task{MilliCPU: 1, GPUCount: 1, MilliGPU: 500, Models: []string{"P100"}}, false},
		{"no devices", node(4000, nil), shared(1000, 100), false},
		{"zero-capacity device", node(4000, []Device{{Model: "T4"}}), shared(1000, 1), false},
		{"more devices than the node has", node(4000, gpus("G2", 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000)), whole(1000, 9), false},
		{"count with zero milli is CPU-only", node(4000, nil), Task{MilliCPU: 1000, GPUCount: 2}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Fits(&tc.node, tc.task), "Fits(%s)", tc.name)
		})
	}
}

func TestNoPanicOnDegenerateNodes(t *testing.T) {
	// Zero devices, zero-capacity devices and tasks larger than any node:
	// every scorer, Choose and the measure stay finite and in range.
	w := mustWorkload([]Task{whole(1000, 9), shared(1000, 500), cpuOnly(1000)}, []float64{1, 1, 1})
	nodes := []NodeState{
		{},
		node(8000, nil),
		node(8000, []Device{{Model: "T4"}, {Model: "T4"}}),
		node(8000, gpus("T4", 1000)),
	}
	tasks := []Task{whole(1000, 9), whole(1000, 100), shared(1000, 500), cpuOnly(1000), {}}
	scorers := []NodeScorer{NewFGD(w), BestFit{}, DotProduct{}, GPUPacking{}, GPUClustering{}}
	for i := range nodes {
		f := w.Fragmentation(&nodes[i])
		assert.False(t, math.IsNaN(f), "node %d", i)
		assert.GreaterOrEqual(t, f, 0.0)
		for _, task := range tasks {
			for _, s := range scorers {
				score, devs := s.Score(&nodes[i], task)
				assert.GreaterOrEqual(t, score, int64(0), "%s node %d", s.Name(), i)
				assert.LessOrEqual(t, score, MaxScore)
				if !Fits(&nodes[i], task) {
					assert.Equal(t, DeviceSet(0), devs)
				}
			}
		}
	}
	for _, task := range []Task{whole(1000, 9), whole(1000, 100)} {
		for _, s := range scorers {
			assert.Equal(t, -1, Choose(s, nodes, task).Node, s.Name())
		}
		assert.Equal(t, -1, NewRandom(1).Choose(nodes, task).Node)
	}
	assert.False(t, math.IsNaN(w.FragmentationRatio(nodes)))
}

func TestPlace(t *testing.T) {
	n := node(8000, gpus("T4", 1000, 600))
	require.NoError(t, n.Place(shared(1000, 500), DeviceSet(0).With(1)))
	assert.Equal(t, int64(7000), n.FreeMilliCPU)
	assert.Equal(t, []int64{1000, 100}, []int64{n.Devices[0].FreeMilliGPU, n.Devices[1].FreeMilliGPU})
	assert.True(t, n.ResidentClasses.Has(0))
	require.NoError(t, n.Place(whole(1000, 1), DeviceSet(0).With(0)))
	assert.True(t, n.ResidentClasses.Has(1))
	assert.Equal(t, 2, n.ResidentClasses.Len())
	require.NoError(t, n.Place(cpuOnly(1000), 0))

	before := n
	before.Devices = append([]Device(nil), n.Devices...)
	for name, err := range map[string]error{
		"too much cpu":     n.Place(cpuOnly(100000), 0),
		"device too small": n.Place(shared(0, 500), DeviceSet(0).With(1)),
		"missing device":   n.Place(shared(0, 50), DeviceSet(0).With(5)),
		"wrong count":      n.Place(whole(0, 1), 0),
		"devices for cpu":  n.Place(cpuOnly(1), DeviceSet(0).With(0)),
	} {
		assert.True(t, errors.Is(err, ErrInvalidPlacement), "%s: %v", name, err)
	}
	assert.Equal(t, before, n, "a failed Place changed the node")
}

func TestValidate(t *testing.T) {
	require.NoError(t, (&NodeState{Devices: gpus("T4", 0, 1000)}).Validate())
	for name, n := range map[string]NodeState{
		"negative capacity": {Devices: []Device{{CapacityMilliGPU: -1}}},
		"free above cap":    {Devices: []Device{{CapacityMilliGPU: 1000, FreeMilliGPU: 1001}}},
		"negative free":     {Devices: []Device{{CapacityMilliGPU: 1000, FreeMilliGPU: -1}}},
		"too many devices":  {Devices: make([]Device, MaxDevices+1)},
	} {
		assert.True(t, errors.Is(n.Validate(), ErrInvalidNode), name)
	}
	require.NoError(t, Task{MilliCPU: 1, Memory: 2, GPUCount: 9, MilliGPU: 1000}.Validate())
	for name, task := range map[string]Task{
		"negative cpu":     {MilliCPU: -1},
		"negative memory":  {Memory: -1},
		"negative count":   {GPUCount: -1},
		"milli above 1000": {GPUCount: 1, MilliGPU: 1001},
		"negative milli":   {GPUCount: 1, MilliGPU: -1},
	} {
		assert.True(t, errors.Is(task.Validate(), ErrInvalidTask), name)
	}
}

func TestDeviceSetAndClasses(t *testing.T) {
	s := DeviceSet(0).With(0).With(3).With(63).With(64).With(-1)
	assert.Equal(t, 3, s.Len())
	assert.Equal(t, []int{0, 3, 63}, s.AppendIndexes(nil))
	assert.True(t, s.Has(63))
	assert.False(t, s.Has(64))
	assert.False(t, s.Has(-1))

	c, ok := shared(0, 500).Class()
	assert.True(t, ok)
	assert.Equal(t, Class(0), c)
	c, _ = whole(0, 8).Class()
	assert.Equal(t, Class(8), c)
	c, _ = whole(0, 1000).Class()
	assert.Equal(t, Class(MaxDevices-1), c)
	_, ok = cpuOnly(1).Class()
	assert.False(t, ok)
	assert.Equal(t, int64(0), cpuOnly(1).TotalMilliGPU())
	assert.Equal(t, int64(8000), whole(0, 8).TotalMilliGPU())
	assert.Equal(t, int64(math.MaxInt64), Task{GPUCount: math.MaxInt, MilliGPU: 1000}.TotalMilliGPU())
}
