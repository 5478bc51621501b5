package gpushare

// gpus returns standard devices of one model with the given free milli-GPU.
func gpus(model string, free ...int64) []Device {
	d := make([]Device, len(free))
	for i, f := range free {
		d[i] = Device{Model: model, CapacityMilliGPU: MilliPerDevice, FreeMilliGPU: f}
	}
	return d
}

// node returns a node with plenty of memory.
func node(milliCPU int64, devs []Device) NodeState {
	return NodeState{FreeMilliCPU: milliCPU, FreeMemory: 1 << 40, Devices: devs}
}

func shared(milliCPU, milliGPU int64) Task {
	return Task{MilliCPU: milliCPU, GPUCount: 1, MilliGPU: milliGPU}
}

func whole(milliCPU int64, count int) Task {
	return Task{MilliCPU: milliCPU, GPUCount: count, MilliGPU: MilliPerDevice}
}

func cpuOnly(milliCPU int64) Task { return Task{MilliCPU: milliCPU} }

func mustWorkload(shapes []Task, weights []float64) *Workload {
	w, err := NewWorkload(shapes, weights)
	if err != nil {
		panic(err)
	}
	return w
}
