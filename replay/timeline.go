package replay

import (
	"time"

	"github.com/schedkit/schedkit/gpushare"
	"github.com/schedkit/schedkit/snapshot"
)

// timeline integrates requested CPU, memory, GPU and the nodes in use over
// trace time, for Config.Departures.
type timeline struct {
	on                 bool
	cpu, mem, gpu      int64
	nodes              int
	podsOn             map[string]int
	areaCPU, areaMem   float64
	areaGPU, areaNodes float64
	first, last        time.Duration
	started            bool
}

func newTimeline(snap *snapshot.Snapshot, on bool) *timeline {
	tl := &timeline{on: on, podsOn: map[string]int{}}
	if !on {
		return tl
	}
	for _, ni := range snap.Nodes() {
		req := ni.Requested()
		tl.cpu += req.MilliCPU()
		tl.mem += req.Memory()
		for _, d := range ni.Devices() {
			tl.gpu += d.CapacityMilliGPU - d.FreeMilliGPU
		}
		if n := ni.NumPods(); n > 0 {
			tl.podsOn[ni.Name()] = n
			tl.nodes++
		}
	}
	return tl
}

// advance accounts for the state held from the previous event until at.
func (tl *timeline) advance(at time.Duration) {
	if !tl.on {
		return
	}
	if !tl.started {
		tl.first, tl.last, tl.started = at, at, true
	}
	dt := float64(at - tl.last)
	tl.areaCPU += float64(tl.cpu) * dt
	tl.areaMem += float64(tl.mem) * dt
	tl.areaGPU += float64(tl.gpu) * dt
	tl.areaNodes += float64(tl.nodes) * dt
	tl.last = at
}

func (tl *timeline) add(t gpushare.Task, node string) {
	if !tl.on {
		return
	}
	tl.cpu, tl.mem, tl.gpu = tl.cpu+t.MilliCPU, tl.mem+t.Memory, tl.gpu+t.TotalMilliGPU()
	if tl.podsOn[node]++; tl.podsOn[node] == 1 {
		tl.nodes++
	}
}

func (tl *timeline) remove(t gpushare.Task, node string) {
	if !tl.on {
		return
	}
	tl.cpu, tl.mem, tl.gpu = tl.cpu-t.MilliCPU, tl.mem-t.Memory, tl.gpu-t.TotalMilliGPU()
	if tl.podsOn[node]--; tl.podsOn[node] == 0 {
		tl.nodes--
	}
}

// result replaces the end-state ratios with the time-weighted means.
func (tl *timeline) result(rep *Report) {
	span := float64(tl.last - tl.first)
	if !tl.on || span <= 0 {
		return
	}
	mean := func(area float64, u Usage) Usage {
		req := int64(area / span)
		return newUsage(req, u.Allocatable, u.Unit)
	}
	rep.CPU, rep.Memory, rep.GPU = mean(tl.areaCPU, rep.CPU), mean(tl.areaMem, rep.Memory), mean(tl.areaGPU, rep.GPU)
	rep.NodesUsed = int(tl.areaNodes/span + 0.5)
	rep.TimeWeighted = true
}
