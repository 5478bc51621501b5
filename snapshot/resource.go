package snapshot

import (
	"fmt"
	"github.com/schedkit/schedkit/internal/quantity"
	"github.com/schedkit/schedkit/internal/resname"
	"strings"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/schedkit/schedkit/internal/arith"
)

// ResourceID is the small integer a resource name is interned to. The four
// built-in resources have fixed IDs ([CPU], [Memory], [EphemeralStorage],
// [Pods]); every other resource the scheduler counts (hugepages-*, extended
// resources such as nvidia.com/gpu, attachable-volumes-*, prefixed native
// resources) gets the next free ID the first time [Intern] sees it. IDs are
// process-wide, never reused and never change. Valid IDs are dense from 0
// in the order the names were first seen; [NoResource] (-1) is what a
// failed [Intern] or [LookupResource] returns, so an ID taken without
// checking the boolean never names CPU (ID 0) by accident.
type ResourceID int32

// NoResource is the ID of no resource: returned with false by [Intern] and
// [LookupResource]. [Vector.Get] reads 0 for it, [Vector.Set] ignores it
// and its [ResourceID.Name] is "".
const NoResource ResourceID = -1

// The built-in resources and their units.
const (
	// CPU is counted in milli-CPU (1000 = one core).
	CPU ResourceID = iota
	// Memory is counted in bytes.
	Memory
	// EphemeralStorage is counted in bytes.
	EphemeralStorage
	// Pods is the number of pods a node admits (upstream AllowedPodNumber);
	// pods never request it.
	Pods

	numBase = 4
)

// interner maps resource names to IDs. Reads are lock-free (an atomic
// pointer to an immutable table); writes take a mutex and publish a new
// table, so Intern of a new name is O(resources) and rare.
var interner struct {
	mu    sync.Mutex
	table atomic.Pointer[internTable]
}

type internTable struct {
	byName map[v1.ResourceName]ResourceID
	names  []v1.ResourceName
}

func init() {
	t := &internTable{byName: map[v1.ResourceName]ResourceID{}}
	for _, n := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods} {
		t.byName[n] = ResourceID(len(t.names))
		t.names = append(t.names, n)
	}
	interner.table.Store(t)
}

// Intern returns the ID of name, assigning a new one if needed. It reports
// false for names the scheduler does not count (upstream's
// schedutil.IsScalarResourceName plus the four built-ins); such names are
// ignored in requests and allocatable, as upstream ignores them, and their
// ID is [NoResource]. Safe for concurrent use; O(1) for a known name.
func Intern(name v1.ResourceName) (ResourceID, bool) {
	if id, ok := interner.table.Load().byName[name]; ok {
		return id, true
	}
	if !resname.IsScalarResourceName(name) {
		return NoResource, false
	}
	interner.mu.Lock()
	defer interner.mu.Unlock()
	old := interner.table.Load()
	if id, ok := old.byName[name]; ok {
		return id, true
	}
	t := &internTable{byName: make(map[v1.ResourceName]ResourceID, len(old.byName)+1), names: append(old.names[:len(old.names):len(old.names)], name)}
	for k, v := range old.byName {
		t.byName[k] = v
	}
	id := ResourceID(len(old.names))
	t.byName[name] = id
	interner.table.Store(t)
	return id, true
}

// LookupResource returns the ID of name if it has been interned, else
// ([NoResource], false). It never assigns an ID. Safe for concurrent use;
// O(1), allocates nothing.
func LookupResource(name v1.ResourceName) (ResourceID, bool) {
	if id, ok := interner.table.Load().byName[name]; ok {
		return id, true
	}
	return NoResource, false
}

// numResources is the number of resource IDs assigned so far; every ID is in
// [0, numResources()).
func numResources() int { return len(interner.table.Load().names) }

// Name returns the resource name of r, or "" for [NoResource] and any ID
// never assigned.
func (r ResourceID) Name() v1.ResourceName {
	names := interner.table.Load().names
	if r < 0 || int(r) >= len(names) {
		return ""
	}
	return names[r]
}

// String returns the resource name.
func (r ResourceID) String() string { return string(r.Name()) }

// Vector is a dense vector of resource amounts indexed by [ResourceID]:
// milli-CPU, bytes of memory and ephemeral storage, pod count, and one entry
// per interned scalar resource (its upstream Value()). Missing entries read
// as 0. The zero Vector is empty and ready to use.
//
// A Vector holds a slice: a copy shares the extended part. Vectors returned
// by [NodeInfo] and [PodInfo] accessors are read-only; call [Vector.Clone]
// before changing one.
//
// All arithmetic saturates at [math.MaxInt64] and [math.MinInt64]; nothing
// wraps.
type Vector struct {
	base [numBase]int64
	ext  []int64 // ext[i] is ResourceID(numBase+i)
}

// Get returns the amount of r (0 for [NoResource] or an ID beyond v); O(1),
// allocates nothing.
func (v *Vector) Get(r ResourceID) int64 {
	if r < numBase {
		if r < 0 {
			return 0
		}
		return v.base[r]
	}
	i := int(r) - numBase
	if i < len(v.ext) {
		return v.ext[i]
	}
	return 0
}

// MilliCPU returns the CPU amount in milli-CPU.
func (v *Vector) MilliCPU() int64 { return v.base[CPU] }

// Memory returns the memory amount in bytes.
func (v *Vector) Memory() int64 { return v.base[Memory] }

// EphemeralStorage returns the ephemeral storage amount in bytes.
func (v *Vector) EphemeralStorage() int64 { return v.base[EphemeralStorage] }

// AllowedPodNumber returns the pod count entry (allocatable pods of a node).
func (v *Vector) AllowedPodNumber() int64 { return v.base[Pods] }

// Len is one past the highest ResourceID v may hold a non-zero amount for.
func (v *Vector) Len() int { return numBase + len(v.ext) }

// Set sets the amount of r ([NoResource] is ignored). It allocates only
// when r is an extended resource beyond the vector's current length.
func (v *Vector) Set(r ResourceID, x int64) {
	if r < numBase {
		if r >= 0 {
			v.base[r] = x
		}
		return
	}
	i := int(r) - numBase
	if i >= len(v.ext) {
		if x == 0 {
			return
		}
		n := make([]int64, i+1)
		copy(n, v.ext)
		v.ext = n
	}
	v.ext[i] = x
}

// Add adds o to v element-wise, saturating. O(len), allocates only to grow.
func (v *Vector) Add(o *Vector) {
	for i := range v.base {
		v.base[i] = arith.Add(v.base[i], o.base[i])
	}
	v.growTo(len(o.ext))
	for i, x := range o.ext {
		v.ext[i] = arith.Add(v.ext[i], x)
	}
}

// Sub subtracts o from v element-wise, saturating.
func (v *Vector) Sub(o *Vector) {
	for i := range v.base {
		v.base[i] = arith.Sub(v.base[i], o.base[i])
	}
	v.growTo(len(o.ext))
	for i, x := range o.ext {
		v.ext[i] = arith.Sub(v.ext[i], x)
	}
}

// setMax sets every element of v to the larger of v's and o's.
func (v *Vector) setMax(o *Vector) {
	for i := range v.base {
		v.base[i] = max(v.base[i], o.base[i])
	}
	v.growTo(len(o.ext))
	for i, x := range o.ext {
		v.ext[i] = max(v.ext[i], x)
	}
}

func (v *Vector) growTo(n int) {
	if n > len(v.ext) {
		e := make([]int64, n)
		copy(e, v.ext)
		v.ext = e
	}
}

// Clone returns a deep copy of v.
func (v Vector) Clone() Vector {
	if len(v.ext) > 0 {
		v.ext = append([]int64(nil), v.ext...)
	}
	return v
}

// IsZero reports whether every entry is 0.
func (v *Vector) IsZero() bool {
	if v.base != [numBase]int64{} {
		return false
	}
	for _, x := range v.ext {
		if x != 0 {
			return false
		}
	}
	return true
}

// Equal reports whether v and o hold the same amounts (trailing zeros do not
// matter).
func (v *Vector) Equal(o *Vector) bool {
	if v.base != o.base {
		return false
	}
	n := max(len(v.ext), len(o.ext))
	for i := range n {
		var a, b int64
		if i < len(v.ext) {
			a = v.ext[i]
		}
		if i < len(o.ext) {
			b = o.ext[i]
		}
		if a != b {
			return false
		}
	}
	return true
}

// String formats the non-zero entries as "cpu=1500m memory=1073741824 ...".
func (v Vector) String() string {
	var b strings.Builder
	for i := range v.Len() {
		r := ResourceID(i)
		x := v.Get(r)
		if x == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		if r == CPU {
			fmt.Fprintf(&b, "cpu=%dm", x)
		} else {
			fmt.Fprintf(&b, "%s=%d", r.Name(), x)
		}
	}
	return b.String()
}

// NewVector converts a ResourceList: cpu in milli-CPU, everything else by
// its upstream Value() (bytes, counts). Names the scheduler does not count
// are ignored (see [Intern]). Quantities beyond int64 saturate to
// math.MaxInt64 (upstream would silently wrap or read 0). A negative
// quantity is an error wrapping [ErrNegativeQuantity] that names the
// resource; the caller adds the object and field.
func NewVector(rl v1.ResourceList) (Vector, error) {
	var v Vector
	err := v.addList(rl)
	return v, err
}

// addList adds a ResourceList to v with the rules of [NewVector]. On error v
// is unchanged.
func (v *Vector) addList(rl v1.ResourceList) error {
	for name, q := range rl {
		if q.Sign() < 0 {
			return fmt.Errorf("%s: %s: %w", name, q.String(), ErrNegativeQuantity)
		}
	}
	for name, q := range rl {
		id, ok := Intern(name)
		if !ok {
			continue
		}
		v.Set(id, arith.Add(v.Get(id), quantityValue(id, q)))
	}
	return nil
}

// quantityValue converts q to the unit of r: milli-CPU for [CPU], otherwise
// whole units, rounded up as apimachinery's MilliValue/Value do, saturating
// at math.MaxInt64 instead of wrapping (see [quantity.Scaled], which also
// bounds the cost of quantities with huge exponents such as "1e999999999").
func quantityValue(r ResourceID, q resource.Quantity) int64 {
	s := resource.Scale(0)
	if r == CPU {
		s = resource.Milli
	}
	v, _ := quantity.Scaled(q, s)
	return v
}
