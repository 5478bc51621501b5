package score

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Config names a built-in scorer and gives its settings, as a scheduler
// configuration does (kube-scheduler's pluginConfig args, the simulator's
// flags; the JSON names are those of a pluginConfig's args). [Config.Build]
// builds it.
type Config struct {
	// Scorer is one of [ScorerNames]; "" means LeastAllocated.
	Scorer string `json:"scorer,omitempty"`
	// Resources and weights for the resource scorers (empty: cpu and
	// memory, weight 1). BalancedAllocation takes weight 0 or 1 only.
	Resources []ResourceSpec `json:"resources,omitempty"`
	// Shape of RequestedToCapacityRatio; an error for any other scorer.
	Shape []UtilizationShapePoint `json:"shape,omitempty"`
	// Spread selects DotProduct's spreading direction (see [NewTetris]).
	Spread bool `json:"spread,omitempty"`
}

// builtins maps each name [Config.Build] accepts to its constructor, in
// the order [ScorerNames] lists them.
var builtins = []struct {
	name  string
	build func(Config) (Scorer, error)
}{
	{"LeastAllocated", func(c Config) (Scorer, error) { return NewLeastAllocated(c.Resources...) }},
	{"MostAllocated", func(c Config) (Scorer, error) { return NewMostAllocated(c.Resources...) }},
	{"RequestedToCapacityRatio", func(c Config) (Scorer, error) {
		return NewRequestedToCapacityRatio(RequestedToCapacityRatioArgs{Resources: c.Resources, Shape: c.Shape})
	}},
	{"BalancedAllocation", func(c Config) (Scorer, error) {
		names := make([]v1.ResourceName, len(c.Resources))
		for i, r := range c.Resources {
			if r.Weight != 0 && r.Weight != 1 {
				return nil, fmt.Errorf("%w: resources[%d].weight: %d, BalancedAllocation takes weight 1 only", ErrInvalidConfig, i, r.Weight)
			}
			names[i] = r.Name
		}
		return NewBalancedAllocation(names...)
	}},
	{"ImageLocality", func(Config) (Scorer, error) { return NewImageLocality(), nil }},
	{"TaintToleration", func(Config) (Scorer, error) { return NewTaintToleration(), nil }},
	{"NodeAffinity", func(Config) (Scorer, error) { return NewNodeAffinity(nil) }},
	{"BinPack", func(c Config) (Scorer, error) { return NewBinPack(c.Resources...) }},
	{"DominantResource", func(c Config) (Scorer, error) { return NewDominantResource(c.Resources...) }},
	{"DotProduct", func(c Config) (Scorer, error) {
		return newTetris(c.Spread, c.Resources)
	}},
}

// ScorerNames lists the built-in scorers [Config.Build] builds by name, in
// a fixed order. It returns a new slice, O(names).
func ScorerNames() []string {
	names := make([]string, len(builtins))
	for i, b := range builtins {
		names[i] = b.name
	}
	return names
}

// Build returns the built-in scorer c names, with c's settings. Errors wrap
// [ErrInvalidConfig] and name the field: an unknown name ("scorer: unknown
// scorer ..."), a Shape for a scorer other than RequestedToCapacityRatio,
// Spread for a scorer other than DotProduct, and whatever the scorer's constructor rejects (a weight out of range,
// a malformed shape). O(resources + shape points); the scorer is new.
func (c Config) Build() (Scorer, error) {
	name := c.Scorer
	if name == "" {
		name = "LeastAllocated"
	}
	for _, b := range builtins {
		if b.name != name {
			continue
		}
		if c.Shape != nil && name != "RequestedToCapacityRatio" {
			return nil, fmt.Errorf("%w: shape: only for scorer RequestedToCapacityRatio", ErrInvalidConfig)
		}
		if c.Spread && name != "DotProduct" {
			return nil, fmt.Errorf("%w: spread: only for scorer DotProduct", ErrInvalidConfig)
		}
		s, err := b.build(c)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return s, nil
	}
	names := ScorerNames()
	return nil, fmt.Errorf("%w: scorer: unknown scorer %q (want %s or %s)", ErrInvalidConfig, c.Scorer,
		strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}
