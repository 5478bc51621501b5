package selector

import (
	"math"
	"slices"
	"unique"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Labels is a label set the engine reads. Lookup returns the value of
// the label key (given as a string and as its handle, so that a set may
// compare either) and, when the set holds it, the value's handle (the
// zero handle otherwise).
type Labels interface {
	Lookup(key string, kh unique.Handle[string]) (value string, vh unique.Handle[string], ok bool)
}

// Map is a label map (metadata.labels) as a [Labels]; O(1) look-up.
type Map map[string]string

// Lookup implements [Labels].
func (m Map) Lookup(key string, _ unique.Handle[string]) (string, unique.Handle[string], bool) {
	v, ok := m[key]
	return v, unique.Handle[string]{}, ok
}

// Label is one label as interned handles (snapshot.Label's shape).
type Label = struct{ Key, Value unique.Handle[string] }

// Handles is a label list of handles (a node's snapshot.NodeInfo.Labels:
// one value per key) as a [Labels]; a look-up scans it comparing keys by
// pointer: O(labels), no map access. Convert with
// Handles[snapshot.Label](ni.Labels()).
type Handles[E ~struct{ Key, Value unique.Handle[string] }] []E

// Lookup implements [Labels].
func (h Handles[E]) Lookup(_ string, kh unique.Handle[string]) (string, unique.Handle[string], bool) {
	for i := range h {
		if l := Label(h[i]); l.Key == kh {
			return l.Value.Value(), l.Value, true
		}
	}
	return "", unique.Handle[string]{}, false
}

// requirement is one compiled label requirement. Equals is In with one
// value.
type requirement struct {
	key    string
	kh     unique.Handle[string]
	op     selection.Operator
	values []string
	vhs    []unique.Handle[string]
	num    int64 // Gt / Lt operand
}

// newRequirement validates (key, op, values) with apimachinery's
// labels.NewRequirement (its error, with path when path is not nil) and
// compiles it.
func newRequirement(key string, op selection.Operator, values []string, path *field.Path) (requirement, error) {
	var opts []field.PathOption
	if path != nil {
		opts = append(opts, field.WithPath(path))
	}
	if _, err := labels.NewRequirement(key, op, values, opts...); err != nil {
		return requirement{}, err
	}
	return compileRequirement(key, op, values), nil
}

// compileRequirement compiles a requirement already known to be valid
// (or, for SelectorFromSet's Equals, taken unvalidated as upstream does).
func compileRequirement(key string, op selection.Operator, values []string) requirement {
	if op == selection.Equals || op == selection.DoubleEquals {
		op = selection.In
	}
	if op == selection.NotEquals {
		op = selection.NotIn
	}
	r := requirement{key: key, kh: unique.Make(key), op: op, values: slices.Clone(values)}
	r.vhs = make([]unique.Handle[string], len(values))
	for i, v := range values {
		r.vhs[i] = unique.Make(v)
	}
	if (op == selection.GreaterThan || op == selection.LessThan) && len(values) == 1 {
		r.num, _ = parseInt64(values[0])
	}
	return r
}

// matchReq is labels.Requirement.Matches for one compiled requirement.
func matchReq[L Labels](r *requirement, ls L) bool {
	v, vh, ok := ls.Lookup(r.key, r.kh)
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

// has reports whether the requirement lists the value: by handle when
// the set gave one, else by string.
func (r *requirement) has(v string, vh unique.Handle[string]) bool {
	if vh != (unique.Handle[string]{}) {
		return slices.Contains(r.vhs, vh)
	}
	return slices.Contains(r.values, v)
}

// matchAll reports whether every requirement holds (true for none).
func matchAll[L Labels](reqs []requirement, ls L) bool {
	for i := range reqs {
		if !matchReq(&reqs[i], ls) {
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
