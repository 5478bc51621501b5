package parity

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	resourcehelper "k8s.io/component-helpers/resource"
)

// Extended resources the generator puts on nodes and pods. GPU is a
// device-plugin extended resource; hugepages are a native resource that the
// scheduler treats as a scalar.
const (
	ResourceGPU       v1.ResourceName = "nvidia.com/gpu"
	ResourceHugePages v1.ResourceName = "hugepages-2Mi"
	ResourceFoo       v1.ResourceName = "example.com/foo"
)

// Config tunes a [Gen]. The zero value is not useful: start from
// [DefaultConfig].
type Config struct {
	// Nodes is the number of nodes per [Case], at least 1.
	Nodes int
	// MaxBoundPerNode is the largest number of pods bound to one node.
	MaxBoundPerNode int
	// PExtreme is the probability that a quantity is drawn from the
	// extreme pool (above int64 milli-units, 2^62-scale values) where
	// upstream's arithmetic wraps or truncates. 0 for the parity suites,
	// which check identical results; > 0 for the suites that name the
	// deliberate differences.
	PExtreme float64
	// PNodeName is the probability that a pending pod names a node in
	// spec.nodeName.
	PNodeName float64
	// PStatus is the probability that a pod (bound or pending) carries
	// in-place-resize status: container allocated/actuated resources,
	// the kubelet's pod-level maps, a PodResizePending condition.
	PStatus float64
}

// DefaultConfig is the configuration of the parity suites: small clusters
// (so that 10,000 cases run in seconds) with everything realistic enabled and
// no extreme quantities.
func DefaultConfig() Config {
	return Config{Nodes: 6, MaxBoundPerNode: 6, PNodeName: 0.05, PStatus: 0.2}
}

// Gen generates realistic random v1.Node and v1.Pod objects from a seed. The
// same seed and Config always give the same sequence. A Gen is not safe for
// concurrent use.
type Gen struct {
	cfg  Config
	r    *rand.Rand
	seq  int
	uids int
}

// NewGen returns a generator seeded with seed.
func NewGen(seed uint64, cfg Config) *Gen {
	if cfg.Nodes < 1 {
		cfg.Nodes = 1
	}
	return &Gen{cfg: cfg, r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Rand exposes the generator's source, for tests that draw their own extras.
func (g *Gen) Rand() *rand.Rand { return g.r }

// Case is one scheduling situation: nodes, the pods already bound to them
// (spec.nodeName set, possibly over-committing a node), and one pending pod.
type Case struct {
	Nodes []*v1.Node
	Bound []*v1.Pod
	Pod   *v1.Pod
}

// Case draws a new Case with cfg.Nodes nodes.
func (g *Gen) Case() Case {
	g.seq++
	c := Case{}
	for i := 0; i < g.cfg.Nodes; i++ {
		c.Nodes = append(c.Nodes, g.Node(fmt.Sprintf("c%d-node-%d", g.seq, i)))
	}
	for _, n := range c.Nodes {
		// Most nodes only get pods that fit their cpu and memory, as the
		// scheduler would place them; the rest are over-committed (the
		// kubelet shrank allocatable under running pods, or pods were
		// bound by hand).
		fitting := !g.chance(0.3)
		var cpu, mem int64
		k := g.r.IntN(g.cfg.MaxBoundPerNode + 1)
		for j := 0; j < k; j++ {
			p := g.Pod(fmt.Sprintf("c%d-bound-%s-%d", g.seq, n.Name, j), c.Nodes)
			if fitting {
				req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
				pc, pm := req.Cpu().MilliValue(), req.Memory().Value()
				if cpu+pc > n.Status.Allocatable.Cpu().MilliValue() || mem+pm > n.Status.Allocatable.Memory().Value() {
					continue
				}
				cpu, mem = cpu+pc, mem+pm
			}
			p.Spec.NodeName = n.Name
			c.Bound = append(c.Bound, p)
		}
	}
	c.Pod = g.Pod(fmt.Sprintf("c%d-pending", g.seq), c.Nodes)
	if g.r.Float64() < g.cfg.PNodeName {
		if g.r.IntN(5) == 0 {
			c.Pod.Spec.NodeName = "no-such-node"
		} else {
			c.Pod.Spec.NodeName = c.Nodes[g.r.IntN(len(c.Nodes))].Name
		}
	}
	return c
}

func (g *Gen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

func (g *Gen) chance(p float64) bool { return g.r.Float64() < p }

// extreme quantities: beyond int64 milli-units, near 2^62 and 2^63, and
// values whose sum over a few pods wraps int64.
var extremeQuantities = []string{"9e18", "4611686018427387904", "100Ei", "9223372036854775807", "1e19", "8Ei", "9223372036854775807m"}

func (g *Gen) qty(pool ...string) resource.Quantity {
	if g.cfg.PExtreme > 0 && g.chance(g.cfg.PExtreme) {
		return resource.MustParse(g.pick(extremeQuantities...))
	}
	return resource.MustParse(g.pick(pool...))
}

var (
	zones         = []string{"zone-a", "zone-b", "zone-c"}
	instanceTypes = []string{"m5.large", "m5.2xlarge", "c6i.8xlarge", "p4d.24xlarge", "r6g.16xlarge"}
	// Image pool: (name as a node reports it, size in bytes). Pods refer to
	// them with or without a tag (":latest" is implied), or by an alias
	// the node also lists.
	images = []struct {
		names []string
		size  int64
	}{
		{[]string{"registry.k8s.io/pause:3.10"}, 750 << 10},
		{[]string{"nginx:latest", "docker.io/library/nginx:latest"}, 70 << 20},
		{[]string{"nginx:1.27"}, 68 << 20},
		{[]string{"gcr.io/app/api:v2", "gcr.io/app/api@sha256:0f3c"}, 240 << 20},
		{[]string{"nvcr.io/nvidia/pytorch:24.05"}, 9 << 30},
		{[]string{"quay.io/prometheus/node-exporter:v1.8.0"}, 23 << 20},
		{[]string{"busybox:latest"}, 4 << 20},
		{[]string{"ghcr.io/org/batch:1.0"}, 1000 << 20},
		{[]string{"localhost:5000/tool:dev"}, 512 << 20},
	}
	podImages = []string{
		"registry.k8s.io/pause:3.10", "nginx", "nginx:latest", "nginx:1.27", "docker.io/library/nginx",
		"gcr.io/app/api:v2", "gcr.io/app/api@sha256:0f3c", "nvcr.io/nvidia/pytorch:24.05",
		"quay.io/prometheus/node-exporter:v1.8.0", "busybox", "ghcr.io/org/batch:1.0",
		"localhost:5000/tool:dev", "localhost:5000/tool", "not-on-any-node:1",
	}
	taintPool = []v1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "node-role.kubernetes.io/control-plane", Effect: v1.TaintEffectNoSchedule},
		{Key: "node.kubernetes.io/not-ready", Effect: v1.TaintEffectNoExecute},
		{Key: v1.TaintNodeUnschedulable, Effect: v1.TaintEffectNoSchedule},
		{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "spot", Value: "true", Effect: v1.TaintEffectNoSchedule},
		{Key: "maintenance", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "nvidia.com/gpu", Value: "present", Effect: v1.TaintEffectNoExecute},
	}
)

// Node draws a node. Allocatable is sometimes missing a resource, sometimes
// zero; capacity is at least allocatable.
func (g *Gen) Node(name string) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			UID:  types.UID("uid-" + name),
			Labels: map[string]string{
				v1.LabelHostname:     name,
				v1.LabelTopologyZone: g.pick(zones...),
			},
		},
	}
	if g.chance(0.8) {
		n.Labels[v1.LabelInstanceTypeStable] = g.pick(instanceTypes...)
	}
	if g.chance(0.3) {
		n.Labels["disk"] = g.pick("ssd", "hdd")
	}
	if g.chance(0.2) {
		n.Labels["gpu"] = "true"
	}
	if g.chance(0.3) {
		n.Labels["cores"] = fmt.Sprint(g.r.IntN(130))
	}
	alloc := v1.ResourceList{}
	if !g.chance(0.03) {
		alloc[v1.ResourceCPU] = g.qty("0", "500m", "2", "3500m", "4", "7910m", "8", "16", "32", "64", "96")
	}
	if !g.chance(0.03) {
		alloc[v1.ResourceMemory] = g.qty("0", "1Gi", "3Gi", "7935Mi", "16061896Ki", "32Gi", "64Gi", "256Gi", "512Gi", "16G")
	}
	if g.chance(0.6) {
		alloc[v1.ResourceEphemeralStorage] = g.qty("0", "10Gi", "95Gi", "100G", "1Ti")
	}
	if !g.chance(0.05) {
		alloc[v1.ResourcePods] = g.qty("110", "16", "250", "4", "1")
	}
	if g.chance(0.3) {
		alloc[ResourceGPU] = g.qty("0", "1", "2", "4", "8")
	}
	if g.chance(0.2) {
		alloc[ResourceHugePages] = g.qty("0", "2Mi", "1Gi", "4Gi")
	}
	if g.chance(0.1) {
		alloc[ResourceFoo] = g.qty("0", "1", "3", "100")
	}
	capacity := v1.ResourceList{}
	for _, k := range slices.Sorted(maps.Keys(alloc)) { // fixed order: same seed, same draws
		c := alloc[k].DeepCopy()
		if g.chance(0.5) {
			c.Add(resource.MustParse("1"))
		}
		capacity[k] = c
	}
	n.Status.Allocatable = alloc
	n.Status.Capacity = capacity
	for _, t := range taintPool {
		if g.chance(0.08) {
			n.Spec.Taints = append(n.Spec.Taints, t)
		}
	}
	n.Spec.Unschedulable = g.chance(0.06)
	for _, im := range images {
		if g.chance(0.3) {
			n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: im.names, SizeBytes: im.size})
		}
	}
	return n
}

// requests draws a container's resource requests: missing, explicitly zero,
// or realistic values.
func (g *Gen) requests() v1.ResourceList {
	rl := v1.ResourceList{}
	switch g.r.IntN(6) {
	case 0: // missing
	case 1:
		rl[v1.ResourceCPU] = resource.MustParse("0")
	default:
		rl[v1.ResourceCPU] = g.qty("1m", "100m", "250m", "500m", "1", "1500m", "2", "4", "8")
	}
	switch g.r.IntN(6) {
	case 0:
	case 1:
		rl[v1.ResourceMemory] = resource.MustParse("0")
	default:
		rl[v1.ResourceMemory] = g.qty("64Mi", "128Mi", "500M", "1Gi", "2Gi", "4Gi", "16Gi", "1")
	}
	if g.chance(0.15) {
		rl[v1.ResourceEphemeralStorage] = g.qty("0", "1Gi", "10Gi", "50Gi")
	}
	if g.chance(0.12) {
		rl[ResourceGPU] = g.qty("0", "1", "2", "4")
	}
	if g.chance(0.06) {
		rl[ResourceHugePages] = g.qty("0", "2Mi", "512Mi")
	}
	if g.chance(0.04) {
		rl[ResourceFoo] = g.qty("1", "2")
	}
	return rl
}

func (g *Gen) container(name string) v1.Container {
	c := v1.Container{Name: name, Image: g.pick(podImages...)}
	c.Resources.Requests = g.requests()
	if len(c.Resources.Requests) == 0 && g.chance(0.5) {
		c.Resources.Requests = nil
	}
	if g.chance(0.2) {
		// Limits alone are ignored by the scheduler (no API defaulting here).
		c.Resources.Limits = v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("2Gi")}
	}
	if g.chance(0.12) {
		p := v1.ContainerPort{
			ContainerPort: 8080,
			HostPort:      int32(g.pick2(80, 443, 8080, 9100)),
			Protocol:      v1.Protocol(g.pick("TCP", "UDP", "SCTP", "")),
			HostIP:        g.pick("", "", "0.0.0.0", "127.0.0.1", "10.0.0.1"),
		}
		c.Ports = append(c.Ports, p)
	}
	if g.chance(0.05) {
		c.Ports = append(c.Ports, v1.ContainerPort{ContainerPort: 9090}) // no host port
	}
	return c
}

func (g *Gen) pick2(xs ...int) int { return xs[g.r.IntN(len(xs))] }

// Pod draws a pod that is neither bound nor nominated. nodes are used to
// build realistic matchFields terms (metadata.name In [...]).
func (g *Gen) Pod(name string, nodes []*v1.Node) *v1.Pod {
	g.uids++
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: g.pick("default", "team-a", "kube-system"),
			UID:       types.UID(fmt.Sprintf("pod-uid-%d", g.uids)),
		},
		Spec: v1.PodSpec{SchedulerName: v1.DefaultSchedulerName},
	}
	nc := 1 + g.r.IntN(3)
	for i := 0; i < nc; i++ {
		p.Spec.Containers = append(p.Spec.Containers, g.container(fmt.Sprintf("c%d", i)))
	}
	if g.chance(0.35) {
		ni := 1 + g.r.IntN(3)
		always := v1.ContainerRestartPolicyAlways
		for i := 0; i < ni; i++ {
			c := g.container(fmt.Sprintf("init%d", i))
			c.Ports = nil
			if g.chance(0.4) {
				c.RestartPolicy = &always // restartable sidecar
			}
			p.Spec.InitContainers = append(p.Spec.InitContainers, c)
		}
	}
	if g.chance(0.15) {
		p.Spec.Overhead = v1.ResourceList{v1.ResourceCPU: g.qty("10m", "250m"), v1.ResourceMemory: g.qty("20Mi", "120Mi")}
		if g.chance(0.3) {
			delete(p.Spec.Overhead, v1.ResourceMemory)
		}
	}
	if g.chance(0.12) {
		// Pod-level resources (PodLevelResources, beta and on in v1.37):
		// cpu and/or memory, usually at least the containers' sum.
		rl := v1.ResourceList{}
		if g.chance(0.8) {
			rl[v1.ResourceCPU] = g.qty("0", "500m", "2", "4", "16")
		}
		if g.chance(0.8) {
			rl[v1.ResourceMemory] = g.qty("0", "256Mi", "4Gi", "32Gi")
		}
		if g.chance(0.1) {
			rl[ResourceHugePages] = g.qty("2Mi", "512Mi")
		}
		p.Spec.Resources = &v1.ResourceRequirements{Requests: rl}
	}
	if g.chance(0.1) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "img", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: g.pick(podImages...)}}})
	}
	g.tolerations(p)
	g.affinity(p, nodes)
	if g.cfg.PStatus > 0 && g.chance(g.cfg.PStatus) { // no draw at 0: streams as before
		g.resizeStatus(p)
	}
	return p
}

// resizeStatus gives p the status an in-place resize leaves (kubernetes
// v1.37.2 pkg/kubelet/kubelet_pods.go): the pod was admitted with other
// container requests (often), the kubelet reports per container what it
// allocated and what is actuated, and the pod-level maps — both
// resourcehelper.PodRequests of the admitted pod, overhead included, the
// actuated cpu sometimes read back from the cgroup as another value — and
// maybe a PodResizePending (infeasible or deferred) or PodResizeInProgress
// condition. Some pods get only part of it (one pod-level map, container
// statuses only), as older kubelets or a resize in flight leave them.
func (g *Gen) resizeStatus(p *v1.Pod) {
	admitted := p.DeepCopy()
	if g.chance(0.6) {
		for i := range admitted.Spec.Containers {
			if g.chance(0.7) {
				admitted.Spec.Containers[i].Resources.Requests = g.requests()
			}
		}
	}
	statuses := func(cs []v1.Container) []v1.ContainerStatus {
		var out []v1.ContainerStatus
		for i := range cs {
			st := v1.ContainerStatus{Name: cs[i].Name}
			old := cs[i].Resources.Requests
			switch g.r.IntN(5) {
			case 0: // no status for this container
				continue
			case 1:
				st.AllocatedResources = old
			case 2:
				st.AllocatedResources = old
				st.Resources = &v1.ResourceRequirements{Requests: old}
			case 3:
				st.AllocatedResources = old
				st.Resources = &v1.ResourceRequirements{Requests: g.requests()}
			case 4:
				st.Resources = &v1.ResourceRequirements{Requests: old}
			}
			out = append(out, st)
		}
		return out
	}
	p.Status.ContainerStatuses = statuses(admitted.Spec.Containers)
	p.Status.InitContainerStatuses = statuses(admitted.Spec.InitContainers)
	switch g.r.IntN(4) {
	case 0, 1: // the kubelet's pod-level maps (InPlacePodLevelResourcesVerticalScaling)
		total := resourcehelper.PodRequests(admitted, resourcehelper.PodResourcesOptions{})
		p.Status.AllocatedResources = total
		actuated := total.DeepCopy()
		if g.chance(0.3) {
			actuated[v1.ResourceCPU] = g.qty("100m", "1", "2500m", "4")
		}
		p.Status.Resources = &v1.ResourceRequirements{Requests: actuated}
	case 2: // one map only
		total := resourcehelper.PodRequests(admitted, resourcehelper.PodResourcesOptions{})
		if g.chance(0.5) {
			p.Status.AllocatedResources = total
		} else {
			p.Status.Resources = &v1.ResourceRequirements{Requests: total}
		}
	}
	switch g.r.IntN(6) {
	case 0:
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonInfeasible})
	case 1:
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodResizePending, Status: v1.ConditionTrue, Reason: v1.PodReasonDeferred})
	case 2:
		p.Status.Conditions = append(p.Status.Conditions, v1.PodCondition{Type: v1.PodResizeInProgress, Status: v1.ConditionTrue})
	}
}

// CountedOnceForUpstream returns the pod that upstream v1.37.2 must be
// given to compute what schedkit computes for p (deliberate difference:
// spec.overhead counted once, see snapshot.PodRequests): the overhead
// subtracted, floored at 0, from the pod-level status maps, which the
// kubelet writes with the overhead in them. Upstream then computes
// max(spec, maps − overhead) + overhead = max(spec + overhead, maps), the
// once-counted value, exactly (max(m − o, 0) + o = max(m, o), and
// spec + o ≥ o); maps upstream does not read change nothing. p itself
// (not a copy) when no pod-level map names a resource of the overhead.
func CountedOnceForUpstream(p *v1.Pod) *v1.Pod {
	overlap := false
	for name := range p.Spec.Overhead {
		_, a := p.Status.AllocatedResources[name]
		r := false
		if p.Status.Resources != nil {
			_, r = p.Status.Resources.Requests[name]
		}
		overlap = overlap || a || r
	}
	if !overlap {
		return p
	}
	c := p.DeepCopy()
	sub := func(rl v1.ResourceList) {
		for name, o := range c.Spec.Overhead {
			if q, ok := rl[name]; ok {
				q.Sub(o)
				if q.Sign() < 0 {
					q = resource.Quantity{Format: q.Format}
				}
				rl[name] = q
			}
		}
	}
	sub(c.Status.AllocatedResources)
	if c.Status.Resources != nil {
		sub(c.Status.Resources.Requests)
	}
	return c
}

// CountedOnceCaseForUpstream applies [CountedOnceForUpstream] to every pod
// of cs.
func CountedOnceCaseForUpstream(cs Case) Case {
	out := Case{Nodes: cs.Nodes, Pod: CountedOnceForUpstream(cs.Pod)}
	for _, p := range cs.Bound {
		out.Bound = append(out.Bound, CountedOnceForUpstream(p))
	}
	return out
}

func (g *Gen) tolerations(p *v1.Pod) {
	if !g.chance(0.5) {
		return
	}
	k := 1 + g.r.IntN(3)
	for i := 0; i < k; i++ {
		var t v1.Toleration
		switch g.r.IntN(8) {
		case 0: // tolerate everything
			t = v1.Toleration{Operator: v1.TolerationOpExists}
		case 1: // every taint with this effect
			t = v1.Toleration{Operator: v1.TolerationOpExists, Effect: g.effect()}
		case 2:
			t = v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists, Effect: g.effect()}
		case 3:
			t = v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: g.pick("gpu", "batch"), Effect: g.effect()}
		case 4:
			t = v1.Toleration{Key: "spot", Value: "true", Effect: g.effect()} // empty operator means Equal
		case 5:
			t = v1.Toleration{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: g.pick2Effect(v1.TaintEffectNoSchedule, "")}
		case 6:
			secs := int64(300)
			t = v1.Toleration{Key: "node.kubernetes.io/not-ready", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute, TolerationSeconds: &secs}
		default:
			t = v1.Toleration{Key: g.pick("maintenance", "nvidia.com/gpu", "node-role.kubernetes.io/control-plane"), Operator: v1.TolerationOpExists, Effect: g.effect()}
		}
		p.Spec.Tolerations = append(p.Spec.Tolerations, t)
	}
}

func (g *Gen) pick2Effect(xs ...v1.TaintEffect) v1.TaintEffect { return xs[g.r.IntN(len(xs))] }

func (g *Gen) effect() v1.TaintEffect {
	return g.pick2Effect("", v1.TaintEffectNoSchedule, v1.TaintEffectPreferNoSchedule, v1.TaintEffectNoExecute)
}

func (g *Gen) requirement(nodes []*v1.Node) v1.NodeSelectorRequirement {
	switch g.r.IntN(7) {
	case 0:
		return v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{g.pick(zones...), g.pick(zones...)}}
	case 1:
		return v1.NodeSelectorRequirement{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpNotIn, Values: []string{g.pick(zones...)}}
	case 2:
		return v1.NodeSelectorRequirement{Key: "gpu", Operator: v1.NodeSelectorOpExists}
	case 3:
		return v1.NodeSelectorRequirement{Key: "disk", Operator: v1.NodeSelectorOpDoesNotExist}
	case 4:
		return v1.NodeSelectorRequirement{Key: "cores", Operator: g.pick2Op(v1.NodeSelectorOpGt, v1.NodeSelectorOpLt), Values: []string{fmt.Sprint(g.r.IntN(130))}}
	case 5:
		return v1.NodeSelectorRequirement{Key: v1.LabelInstanceTypeStable, Operator: v1.NodeSelectorOpIn, Values: []string{g.pick(instanceTypes...)}}
	default:
		return v1.NodeSelectorRequirement{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpNotIn, Values: []string{nodes[g.r.IntN(len(nodes))].Name}}
	}
}

func (g *Gen) pick2Op(xs ...v1.NodeSelectorOperator) v1.NodeSelectorOperator {
	return xs[g.r.IntN(len(xs))]
}

func (g *Gen) term(nodes []*v1.Node) v1.NodeSelectorTerm {
	var t v1.NodeSelectorTerm
	k := g.r.IntN(3)
	for i := 0; i < k; i++ {
		t.MatchExpressions = append(t.MatchExpressions, g.requirement(nodes))
	}
	if g.chance(0.25) || k == 0 {
		vals := []string{}
		for _, n := range nodes {
			if g.chance(0.5) {
				vals = append(vals, n.Name)
			}
		}
		op := v1.NodeSelectorOpIn
		if g.chance(0.25) {
			op = v1.NodeSelectorOpNotIn
		}
		// API validation allows exactly one value for a metadata.name field
		// selector; an empty vals draws a name no node has.
		name := "gone-node"
		if len(vals) > 0 {
			name = vals[g.r.IntN(len(vals))]
		}
		if k == 0 || g.chance(0.8) {
			t.MatchFields = append(t.MatchFields, v1.NodeSelectorRequirement{Key: "metadata.name", Operator: op, Values: []string{name}})
		}
	}
	return t
}

func (g *Gen) affinity(p *v1.Pod, nodes []*v1.Node) {
	if g.chance(0.2) {
		p.Spec.NodeSelector = map[string]string{}
		if g.chance(0.7) {
			p.Spec.NodeSelector[v1.LabelTopologyZone] = g.pick(zones...)
		}
		if g.chance(0.3) {
			p.Spec.NodeSelector["disk"] = "ssd"
		}
	}
	var na v1.NodeAffinity
	if g.chance(0.25) {
		req := &v1.NodeSelector{}
		k := 1 + g.r.IntN(2)
		for i := 0; i < k; i++ {
			req.NodeSelectorTerms = append(req.NodeSelectorTerms, g.term(nodes))
		}
		na.RequiredDuringSchedulingIgnoredDuringExecution = req
	}
	if g.chance(0.35) {
		k := 1 + g.r.IntN(3)
		for i := 0; i < k; i++ {
			na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
				v1.PreferredSchedulingTerm{Weight: int32(1 + g.r.IntN(100)), Preference: g.term(nodes)})
		}
	}
	if na.RequiredDuringSchedulingIgnoredDuringExecution != nil || na.PreferredDuringSchedulingIgnoredDuringExecution != nil {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &na}
	}
}
