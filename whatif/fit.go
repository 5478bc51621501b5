package whatif

import (
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/framework"
	"github.com/schedkit/schedkit/snapshot"
)

// FitResult answers [FitCount].
type FitResult struct {
	// Count is the number of copies placed, in [0, limit].
	Count int
	// Placements are the Count copies in the order they were placed, each
	// with its node.
	Placements []Placement
	// Next is why copy Count+1 does not fit (its scheduling cycle's
	// diagnosis, with the first Count copies in place); nil when Count
	// reached the limit.
	Next *framework.Diagnosis
}

// FitCount answers "how many more copies of template fit?": it places
// copies of template one by one, as the scheduler configured by cfg
// would (its filters and scores, its seeded tie-breaking: the same
// decisions as a framework.Loop given the copies on the same cluster),
// until a copy fits nowhere or limit copies are placed. Copy i (from 0)
// is template named "<name>-<i>" (GenerateName then i when Name is empty)
// with the same spec. The template must be unbound: a set spec.nodeName
// is an error (copies of a bound pod are not what a capacity question
// asks about; clear it, or fork a snapshot of the one node).
//
// It works on a layer opened on f and reverted before it returns: f is as
// before the call. Deterministic for cfg.Seed.
//
// Cost: limit+1 scheduling cycles at most (each O(nodes) filter and
// score work; with the equivalence cache, copies after the first cost
// O(changed nodes) plus cheap O(nodes) passes), and one PodInfo per copy.
// Errors: a nil fork or template, a negative limit, a template with
// spec.nodeName set or an invalid template (wrapping [ErrInvalidInput]), an invalid cfg
// (framework.ErrInvalidConfig).
func FitCount(f *snapshot.Fork, template *v1.Pod, limit int, cfg framework.Config) (FitResult, error) {
	switch {
	case template == nil:
		return FitResult{}, fmt.Errorf("template is nil: %w", ErrInvalidInput)
	case limit < 0:
		return FitResult{}, fmt.Errorf("template %s/%s: limit %d is negative: %w", template.Namespace, template.Name, limit, ErrInvalidInput)
	case template.Spec.NodeName != "":
		return FitResult{}, fmt.Errorf("template %s/%s: spec.nodeName is %q: FitCount places copies of an unbound template; clear spec.nodeName (to count what fits on one node, fork a snapshot holding only that node): %w", template.Namespace, template.Name, template.Spec.NodeName, ErrInvalidInput)
	}
	if _, err := snapshot.DecodePodInfo(copyOf(template, copyName(template, 0)), decoderOf(f)); err != nil {
		return FitResult{}, fmt.Errorf("template %s/%s: %w: %w", template.Namespace, template.Name, err, ErrInvalidInput)
	}
	s, err := framework.New(cfg)
	if err != nil {
		return FitResult{}, err
	}
	if err := open(f); err != nil {
		return FitResult{}, err
	}
	defer f.Revert() //nolint:errcheck // the layer opened above
	var res FitResult
	for i := 0; i <= limit; i++ {
		if i == limit {
			return res, nil
		}
		pi, err := snapshot.DecodePodInfo(copyOf(template, copyName(template, i)), decoderOf(f))
		if err != nil {
			return FitResult{}, err
		}
		p, err := place(s, f, pi)
		if err != nil {
			return FitResult{}, err
		}
		if p.Node == "" {
			res.Next = p.Diagnosis
			return res, nil
		}
		res.Placements = append(res.Placements, p)
		res.Count++
	}
	return res, nil
}

// decoderOf returns the DeviceDecoder pods joining f are parsed with: f's
// (nil for a nil f, whose error the caller reports later).
func decoderOf(f *snapshot.Fork) snapshot.DeviceDecoder {
	if f == nil {
		return nil
	}
	return f.DeviceDecoder()
}
