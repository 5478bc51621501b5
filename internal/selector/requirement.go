package selector

import (
	"math"
	"slices"
	"unique"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/schedkit/schedkit/internal/names"
)

// Label is one label as interned handles: snapshot.Label is this type,
// so a node's labels (snapshot.NodeInfo.Labels, one value per key) are a
// []Label as they are. Matching a []Label scans it comparing keys and
// values by pointer: O(labels) per requirement, no map access.
type Label = struct{ Key, Value unique.Handle[string] }

// requirement is one compiled label requirement. Equals is In with one
// value. A single value is held inline, as a string and a handle (no
// allocation, compared by pointer against a set of handles); more values
// are copied and compared as strings.
type requirement struct {
	key    string
	kh     unique.Handle[string]
	op     selection.Operator
	one    string                // the value, when there is exactly one
	oneH   unique.Handle[string] // unique.Make(one)
	values []string              // the values, when there are several (a copy)
	num    int64                 // Gt / Lt operand
}

// newRequirement validates (key, op, values) with apimachinery's
// labels.NewRequirement (its error, with path when path is not nil) and
// compiles it. A requirement that is certainly valid (requirementValid)
// skips NewRequirement, its regular expressions and allocations.
func newRequirement(key string, op selection.Operator, values []string, path *field.Path) (requirement, error) {
	if requirementValid(key, op, values) {
		return compileRequirement(key, op, values, ""), nil
	}
	var opts []field.PathOption
	if path != nil {
		opts = append(opts, field.WithPath(path))
	}
	if _, err := labels.NewRequirement(key, op, values, opts...); err != nil {
		return requirement{}, err
	}
	return compileRequirement(key, op, values, ""), nil
}

// requirementValid reports that labels.NewRequirement finds nothing in
// (key, op, values): a label key, a value count the operator allows and
// label values. false for Gt and Lt (NewRequirement decides) and for
// anything invalid. O(len(key) + values' lengths); allocates nothing.
func requirementValid(key string, op selection.Operator, values []string) bool {
	switch op {
	case selection.In, selection.NotIn:
		if len(values) == 0 {
			return false
		}
	case selection.Equals, selection.DoubleEquals, selection.NotEquals:
		if len(values) != 1 {
			return false
		}
	case selection.Exists, selection.DoesNotExist:
		if len(values) != 0 {
			return false
		}
	default:
		return false
	}
	if !names.IsLabelKey(key) {
		return false
	}
	for _, v := range values {
		if !names.IsLabelValue(v) {
			return false
		}
	}
	return true
}

// compileRequirement compiles a requirement already known to be valid
// (or, for SelectorFromSet's Equals, taken unvalidated as upstream
// does): values, or with no values the single value one. The compiled
// requirement shares no memory with values.
func compileRequirement(key string, op selection.Operator, values []string, one string) requirement {
	switch op {
	case selection.Equals, selection.DoubleEquals:
		op = selection.In
	case selection.NotEquals:
		op = selection.NotIn
	}
	r := requirement{key: key, kh: unique.Make(key), op: op}
	switch {
	case len(values) == 1:
		one = values[0]
		fallthrough
	case len(values) == 0 && (op == selection.In || op == selection.NotIn):
		r.one, r.oneH = one, unique.Make(one)
	case len(values) > 1:
		r.values = slices.Clone(values)
	}
	if op == selection.GreaterThan || op == selection.LessThan {
		r.num, _ = parseInt64(r.one)
	}
	return r
}

// LabelValue returns the value handle of label key kh in ls (a node's
// labels as snapshot.NodeInfo.Labels holds them). O(len(ls)) handle
// comparisons; allocates nothing.
func LabelValue(ls []Label, kh unique.Handle[string]) (unique.Handle[string], bool) {
	return lookup(ls, kh)
}

// lookup returns the value handle of key kh in ls.
func lookup(ls []Label, kh unique.Handle[string]) (unique.Handle[string], bool) {
	for i := range ls {
		if ls[i].Key == kh {
			return ls[i].Value, true
		}
	}
	return unique.Handle[string]{}, false
}

// matchValue is labels.Requirement.Matches for one compiled requirement
// given the label's value (ok: the label is there): as text v, or as
// handle vh when vh is not the zero handle.
func (r *requirement) matchValue(v string, vh unique.Handle[string], ok bool) bool {
	switch r.op {
	case selection.In:
		return ok && r.has(v, vh)
	case selection.NotIn:
		return !ok || !r.has(v, vh)
	case selection.Exists:
		return ok
	case selection.DoesNotExist:
		return !ok
	case selection.GreaterThan, selection.LessThan:
		if !ok {
			return false
		}
		if vh != (unique.Handle[string]{}) {
			v = vh.Value()
		}
		n, valid := parseInt64(v)
		if !valid {
			return false
		}
		if r.op == selection.GreaterThan {
			return n > r.num
		}
		return n < r.num
	}
	return false
}

// has reports whether the requirement lists the value: a single value by
// handle when there is one, else by string.
func (r *requirement) has(v string, vh unique.Handle[string]) bool {
	if vh != (unique.Handle[string]{}) {
		if r.values == nil {
			return vh == r.oneH
		}
		v = vh.Value()
	}
	if r.values == nil {
		return v == r.one
	}
	return slices.Contains(r.values, v)
}

// matchAll reports whether every requirement holds on a label list
// (true for none).
func matchAll(reqs []requirement, ls []Label) bool {
	for i := range reqs {
		vh, ok := lookup(ls, reqs[i].kh)
		if !reqs[i].matchValue("", vh, ok) {
			return false
		}
	}
	return true
}

// matchAllMap is matchAll on a label map.
func matchAllMap(reqs []requirement, m map[string]string) bool {
	for i := range reqs {
		v, ok := m[reqs[i].key]
		if !reqs[i].matchValue(v, unique.Handle[string]{}, ok) {
			return false
		}
	}
	return true
}

// parseInt64 accepts exactly what strconv.ParseInt(s, 10, 64) accepts (an
// optional sign, then decimal digits, in range) without allocating an
// error on failure.
func parseInt64(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	neg := false
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		neg = true
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	var u uint64
	const lim = uint64(math.MaxInt64) + 1
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if u > (lim-uint64(c-'0'))/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if !neg && u > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(u), true // u == 1<<63 wraps to MinInt64, which is right
	}
	return int64(u), true
}
