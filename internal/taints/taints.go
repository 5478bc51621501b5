// Package taints is the one implementation of whether a toleration
// tolerates a taint, for the TaintToleration filter (framework), its
// scorer (score), PodTopologySpread's nodeTaintsPolicy (score) and the
// DaemonSet controller's node check (snapshot/load).
//
// Layer: internal, bottom. Imports k8s.io/api and k8s.io/apimachinery.
package taints

import (
	"strconv"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/validate/content"
)

// Tolerates is upstream's v1.Toleration.ToleratesTaint
// (k8s.io/api/core/v1/toleration.go): t's effect, when set, is taint's;
// its key, when set, is taint's; and Equal (or no operator) compares the
// values, Exists matches any value. Lt and Gt (feature gate
// TaintTolerationComparisonOperators) compare the values as decimal
// integers when cmp is set and match nothing otherwise. O(1) but for
// parsing Lt and Gt values; allocates nothing.
func Tolerates(t *v1.Toleration, taint *v1.Taint, cmp bool) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "", v1.TolerationOpEqual:
		return t.Value == taint.Value
	case v1.TolerationOpExists:
		return true
	case v1.TolerationOpLt, v1.TolerationOpGt:
		if !cmp {
			return false
		}
		tv, ok := decimalInt(t.Value)
		if !ok {
			return false
		}
		nv, ok := decimalInt(taint.Value)
		if !ok {
			return false
		}
		if t.Operator == v1.TolerationOpLt {
			return nv < tv
		}
		return nv > tv
	}
	return false
}

// Any reports whether one of tols tolerates taint, comparison operators
// off (Tolerates with cmp false): upstream's TolerationsTolerateTaint.
// O(len(tols)); allocates nothing.
func Any(tols []v1.Toleration, taint *v1.Taint) bool {
	for i := range tols {
		if Tolerates(&tols[i], taint, false) {
			return true
		}
	}
	return false
}

// decimalInt parses s as upstream's compareNumericValues does: a canonical
// decimal integer (content.IsDecimalInteger) that fits in int64.
func decimalInt(s string) (int64, bool) {
	if len(content.IsDecimalInteger(s)) > 0 {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}
