package score

import (
	"fmt"
	"strings"

	"github.com/schedkit/schedkit/internal/arith"
	"github.com/schedkit/schedkit/snapshot"
)

// ImageLocalityName is upstream's plugin name.
const ImageLocalityName = "ImageLocality"

// Upstream's ImageLocality thresholds (imagelocality/image_locality.go), in
// bytes.
const (
	mib = 1024 * 1024
	// imageMinThreshold is the summed image score below which a node
	// scores 0: 23 MiB.
	imageMinThreshold int64 = 23 * mib
	// imageMaxContainerThreshold is the per-image cap of the summed
	// score: 1000 MiB × number of images scores 100.
	imageMaxContainerThreshold int64 = 1000 * mib
)

// imageLocality is the scorer [NewImageLocality] returns.
type imageLocality struct{}

var _ Scorer = (*imageLocality)(nil)

// NewImageLocality returns the scorer; it has no arguments.
//
// ImageLocality favours nodes that already hold the pod's images: upstream
// ImageLocality (kube-scheduler v1.37 imagelocality/image_locality.go):
//
//	sum   = Σ over the pod's images present on the node of
//	        int64(float64(size on this node) × numNodesWithImage / numNodes)
//	max   = 1000 MiB × number of images (containers + init containers + image volumes)
//	score = 100 × (clamp(sum, 23 MiB, max) − 23 MiB) / (max − 23 MiB)
//
// Image names are normalised as upstream (a name without a tag gets
// ":latest"); numNodes is the whole cluster ([Cluster.NumNodes]), not just
// the candidates. The spread factor is computed once per pod and image.
//
// Per node this does one map look-up per pod image in the node's image
// list — the node's images are a map, so this scorer is the exception to
// the no-look-up rule; images no node has are dropped in Prepare, and a pod
// none of whose images is anywhere scores 0 without touching the nodes.
// Allocates nothing per node; safe for concurrent use. A nil cluster, or
// one with no nodes, counts every image as on no node (upstream would
// divide by zero).
func NewImageLocality() Scorer { return &imageLocality{} }

// Name returns [ImageLocalityName].
func (*imageLocality) Name() string { return ImageLocalityName }

// normalizedImageName is upstream's: append ":latest" when the name has no
// tag after its last "/".
func normalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}

type podImage struct {
	name   string
	spread float64 // numNodesWithImage / numNodes
}

// Prepare lists the pod's normalised image names with their spread; it
// never skips and never fails.
func (*imageLocality) Prepare(pod *snapshot.PodInfo, cluster Cluster) (PodScorer, error) {
	spec := &pod.Pod().Spec
	p := &imagePod{}
	total := 0
	if cluster != nil {
		total = cluster.NumNodes()
	}
	add := func(image string) {
		p.count++
		if total == 0 {
			return
		}
		name := normalizedImageName(image)
		nn := cluster.ImageNumNodes(name)
		if nn == 0 {
			return
		}
		p.images = append(p.images, podImage{name: name, spread: float64(nn) / float64(total)})
	}
	for i := range spec.InitContainers {
		add(spec.InitContainers[i].Image)
	}
	for i := range spec.Containers {
		add(spec.Containers[i].Image)
	}
	for i := range spec.Volumes {
		if img := spec.Volumes[i].Image; img != nil {
			add(img.Reference)
		}
	}
	p.maxThreshold = int64(p.count) * imageMaxContainerThreshold
	return p, nil
}

type imagePod struct {
	images       []podImage
	count        int
	maxThreshold int64
}

// sum is upstream's sumImageScores for node n.
func (p *imagePod) sum(n *snapshot.NodeInfo) int64 {
	var sum int64
	for k := range p.images {
		im := &p.images[k]
		if size, ok := n.ImageSize(im.name); ok {
			sum = arith.Add(sum, int64(float64(size)*im.spread))
		}
	}
	return sum
}

// priority is upstream's calculatePriority.
func (p *imagePod) priority(sum int64) int64 {
	if p.count == 0 {
		return 0 // upstream: 100*0/(0-23Mi)
	}
	if sum < imageMinThreshold {
		sum = imageMinThreshold
	} else if sum > p.maxThreshold {
		sum = p.maxThreshold
	}
	return mulDiv(MaxScore, sum-imageMinThreshold, p.maxThreshold-imageMinThreshold)
}

func (p *imagePod) Score(nodes []*snapshot.NodeInfo, out []int64) {
	out = out[:len(nodes)]
	if len(p.images) == 0 {
		clear(out)
		return
	}
	for i, n := range nodes {
		if n.NumImages() == 0 {
			out[i] = 0
			continue
		}
		out[i] = p.priority(p.sum(n))
	}
}

// Explain lists the images found on the node and their scaled sizes.
func (p *imagePod) Explain(n *snapshot.NodeInfo) string {
	var b strings.Builder
	for k := range p.images {
		im := &p.images[k]
		if size, ok := n.ImageSize(im.name); ok {
			fmt.Fprintf(&b, "%s %d×%.3g; ", im.name, size, im.spread)
		}
	}
	sum := p.sum(n)
	return fmt.Sprintf("%ssum %d of %d images; score %d", b.String(), sum, p.count, p.priority(sum))
}
