package score_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/score"
	"github.com/schedkit/schedkit/snapshot/snapshottest"
)

const mb = 1024 * 1024

type image struct {
	size  int64
	names []string
}

func imageNode(name string, images ...image) *v1.Node {
	w := snapshottest.MakeNode(name)
	for _, im := range images {
		w.Image(im.size, im.names...)
	}
	return w.Obj()
}

func imagePod(containers []string, initContainers []string, volumes ...string) *v1.Pod {
	p := &v1.Pod{}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: c, Image: c})
	}
	for _, c := range initContainers {
		p.Spec.InitContainers = append(p.Spec.InitContainers, v1.Container{Name: "init", Image: c})
	}
	for _, v := range volumes {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "v", VolumeSource: v1.VolumeSource{Image: &v1.ImageVolumeSource{Reference: v}}})
	}
	return p
}

// Upstream's published vectors: kube-scheduler v1.37.2
// imagelocality/image_locality_test.go TestImageLocalityPriority.
func TestImageLocalityUpstreamVectors(t *testing.T) {
	node403002000 := []image{{40 * mb, []string{"gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"}}, {300 * mb, []string{"gcr.io/300:latest", "gcr.io/300:v1"}}, {2000 * mb, []string{"gcr.io/2000:latest"}}}
	node25010 := []image{{250 * mb, []string{"gcr.io/250:latest"}}, {10 * mb, []string{"gcr.io/10:latest", "gcr.io/10:v1"}}}
	node60040900 := []image{{600 * mb, []string{"gcr.io/600:latest"}}, {40 * mb, []string{"gcr.io/40:latest"}}, {900 * mb, []string{"gcr.io/900:latest"}}}
	node300600900 := []image{{300 * mb, []string{"gcr.io/300:latest"}}, {600 * mb, []string{"gcr.io/600:latest"}}, {900 * mb, []string{"gcr.io/900:latest"}}}
	node400030 := []image{{4000 * mb, []string{"gcr.io/4000:latest"}}, {30 * mb, []string{"gcr.io/30:latest"}}}
	node203040 := []image{{20 * mb, []string{"gcr.io/20:latest"}}, {30 * mb, []string{"gcr.io/30:latest"}}, {40 * mb, []string{"gcr.io/40:latest"}}}

	tests := []struct {
		name  string
		pod   *v1.Pod
		nodes []*v1.Node
		want  []int64
	}{
		{
			// node1: gcr.io/40 40M×1/2 = 20M < 23M → 0. node2: gcr.io/250 250M×1/2 = 125M:
			// 100×(125M−23M)/(2000M−23M) = 5.
			name:  "two images spread on two nodes, prefer the larger image one",
			pod:   imagePod([]string{"gcr.io/40", "gcr.io/250"}, nil),
			nodes: []*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node25010...)},
			want:  []int64{0, 5},
		},
		{
			// node1: (40M + 300M)×1/2 = 170M: 100×(170M−23M)/(2000M−23M) = 7. node2: none → 0.
			name:  "two images on one node, prefer this node",
			pod:   imagePod([]string{"gcr.io/40", "gcr.io/300"}, nil),
			nodes: []*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node25010...)},
			want:  []int64{7, 0},
		},
		{
			// node1: gcr.io/4000 4000M×1/2 = 2000M ≥ max 2000M → 100. node2: 10M×1/2 < 23M → 0.
			name:  "if exceed limit, use limit",
			pod:   imagePod([]string{"gcr.io/10", "gcr.io/4000"}, nil),
			nodes: []*v1.Node{imageNode("node1", node400030...), imageNode("node2", node25010...)},
			want:  []int64{100, 0},
		},
		{
			// Three nodes: node1 4000M×1/3 = 1333M: 100×(1333M−23M)/(2000M−23M) = 66.
			name:  "if exceed limit, use limit (with node which has no images present)",
			pod:   imagePod([]string{"gcr.io/10", "gcr.io/4000"}, nil),
			nodes: []*v1.Node{imageNode("node1", node400030...), imageNode("node2", node25010...), imageNode("node3")},
			want:  []int64{66, 0, 0},
		},
		{
			// node1: 600M×2/3 + 900M×2/3 = 1000M: 100×(1000M−23M)/(3000M−23M) = 32.
			// node2: 300M×1/3 + 600M×2/3 + 900M×2/3 = 1100M: 100×(1100M−23M)/(3000M−23M) = 36.
			name:  "pod with multiple large images, node2 is preferred",
			pod:   imagePod([]string{"gcr.io/300", "gcr.io/600", "gcr.io/900"}, nil),
			nodes: []*v1.Node{imageNode("node1", node60040900...), imageNode("node2", node300600900...), imageNode("node3")},
			want:  []int64{32, 36, 0},
		},
		{
			// node1: 30M×2/2 + 40M×1/2 = 50M: 100×(50M−23M)/(2000M−23M) = 1. node2: 30M: 100×7M/1977M = 0.
			name:  "pod with multiple small images",
			pod:   imagePod([]string{"gcr.io/30", "gcr.io/40"}, nil),
			nodes: []*v1.Node{imageNode("node1", node203040...), imageNode("node2", node400030...)},
			want:  []int64{1, 0},
		},
		{
			// The image volume counts as an image: node1 300M×1/2 = 150M: 100×(150M−23M)/(2000M−23M) = 6.
			name:  "pod with ImageVolume",
			pod:   imagePod([]string{"gcr.io/30"}, nil, "gcr.io/300"),
			nodes: []*v1.Node{imageNode("node1", node300600900...), imageNode("node2", node400030...)},
			want:  []int64{6, 0},
		},
		{
			// Same as above with both images as containers: 6, 0.
			name:  "same images as ImageVolume pod but as regular container images",
			pod:   imagePod([]string{"gcr.io/30", "gcr.io/300"}, nil),
			nodes: []*v1.Node{imageNode("node1", node300600900...), imageNode("node2", node400030...)},
			want:  []int64{6, 0},
		},
		{
			// Init container images count: node1 300M×1/2 = 150M → 6; node2 30M×1/2 = 15M < 23M → 0.
			name:  "include InitContainers: two images spread on two nodes, prefer the larger image one",
			pod:   imagePod([]string{"gcr.io/30"}, []string{"gcr.io/300"}),
			nodes: []*v1.Node{imageNode("node1", node403002000...), imageNode("node2", node203040...)},
			want:  []int64{6, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap, nodes := cluster(t, tc.nodes)
			got, skipped := final(t, score.NewImageLocality(), tc.pod, snap, nodes)
			require.False(t, skipped)
			requireScores(t, nodes, tc.want, got)
		})
	}
}

func TestImageLocality(t *testing.T) {
	t.Run("nil cluster counts no image anywhere", func(t *testing.T) {
		_, nodes := cluster(t, []*v1.Node{imageNode("n", image{4000 * mb, []string{"a:latest"}})})
		ps, err := score.NewImageLocality().Prepare(podInfo(t, imagePod([]string{"a"}, nil)), nil)
		require.NoError(t, err)
		out := []int64{-1}
		ps.Score(nodes, out)
		require.Equal(t, []int64{0}, out)
	})
	t.Run("pod without containers scores 0", func(t *testing.T) {
		snap, nodes := cluster(t, []*v1.Node{imageNode("n", image{4000 * mb, []string{"a:latest"}})})
		got, _ := final(t, score.NewImageLocality(), &v1.Pod{}, snap, nodes)
		require.Equal(t, []int64{0}, got)
	})
	t.Run("explain", func(t *testing.T) {
		// One node of one: a:latest 400M×1/1 = 400M: 100×(400M−23M)/(1000M−23M) = 38.
		snap, nodes := cluster(t, []*v1.Node{imageNode("n", image{400 * mb, []string{"a:latest"}})})
		ps, err := score.NewImageLocality().Prepare(podInfo(t, imagePod([]string{"a"}, nil)), snap)
		require.NoError(t, err)
		require.Equal(t, "a:latest 419430400×1; sum 419430400 of 1 images; score 38", ps.(score.Explainer).Explain(nodes[0]))
	})
}
