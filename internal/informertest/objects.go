package informertest

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The objects part of the contract. Cluster objects other than nodes and
// pods — Namespaces, Services, ReplicationControllers, ReplicaSets,
// StatefulSets, PriorityClasses, PodDisruptionBudgets — are known by
// kind, namespace (none for Namespaces and PriorityClasses) and name:
//
//   - AddObject of a known object replaces it; UpdateObject of an unknown
//     one adds it (informers replay events).
//   - RemoveObject removes the object with the key of the one given (a
//     stale tombstone removes the current one); an unknown one is a no-op
//     returning nil.
//   - The store's snapshots show the objects through the look-ups
//     Namespace, Services, ReplicationController, ReplicaSet, StatefulSet,
//     PriorityClass and PodDisruptionBudgets; Services and
//     PodDisruptionBudgets list a namespace's objects in name order. A
//     snapshot taken earlier does not change.
//   - Bad objects: nil, a type other than those seven, an empty
//     metadata.name, an invalid label selector or selector labels, a
//     namespace on a cluster-scoped object, a PodDisruptionBudget with
//     both minAvailable and maxUnavailable, a PriorityClass with an unknown
//     preemptionPolicy: an error naming the object and the field, and the
//     store exactly as before the call.

// ObjectStore is a store of cluster objects fed by informer events, as
// [RunObjects] drives it.
type ObjectStore interface {
	AddObject(obj runtime.Object) error
	UpdateObject(obj runtime.Object) error
	RemoveObject(obj runtime.Object) error
	// Lookup returns the store's current content as its snapshots show
	// it (for a Cache, a new Snapshot).
	Lookup() Lookup
}

// LiveLookup is implemented by an [ObjectStore] whose Lookup reads the
// store's current state rather than a snapshot (a Cache's own look-ups):
// [RandomObjects] then does not check that an earlier read stays as it
// was.
type LiveLookup interface{ LiveLookup() }

// Lookup is the read side: the look-ups every store's snapshot has.
type Lookup interface {
	Namespace(name string) *v1.Namespace
	Services(namespace string) []*v1.Service
	ReplicationController(namespace, name string) *v1.ReplicationController
	ReplicaSet(namespace, name string) *appsv1.ReplicaSet
	StatefulSet(namespace, name string) *appsv1.StatefulSet
	PriorityClass(name string) *schedulingv1.PriorityClass
	PodDisruptionBudgets(namespace string) []*policyv1.PodDisruptionBudget
}

// Kinds are the object kinds of the suite, as [MakeObject] takes them.
var Kinds = []string{"Namespace", "Service", "ReplicationController", "ReplicaSet", "StatefulSet", "PriorityClass", "PodDisruptionBudget"}

// MakeObject returns a valid object of kind (one of [Kinds]) called
// namespace/name (namespace is ignored for cluster-scoped kinds) whose
// selector (or labels) carry app=name and rev=rev, so that two
// revisions of one object differ.
func MakeObject(kind, namespace, name string, rev int) runtime.Object {
	meta := metav1.ObjectMeta{Namespace: namespace, Name: name}
	set := map[string]string{"app": name, "rev": fmt.Sprint(rev)}
	sel := &metav1.LabelSelector{MatchLabels: set}
	switch kind {
	case "Namespace":
		return &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: set}}
	case "Service":
		return &v1.Service{ObjectMeta: meta, Spec: v1.ServiceSpec{Selector: set}}
	case "ReplicationController":
		return &v1.ReplicationController{ObjectMeta: meta, Spec: v1.ReplicationControllerSpec{Selector: set}}
	case "ReplicaSet":
		return &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Selector: sel}}
	case "StatefulSet":
		return &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: sel}}
	case "PriorityClass":
		return &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: int32(1000 + rev)}
	case "PodDisruptionBudget":
		one := intstr.FromInt32(1)
		return &policyv1.PodDisruptionBudget{ObjectMeta: meta, Spec: policyv1.PodDisruptionBudgetSpec{Selector: sel, MinAvailable: &one}}
	}
	panic("informertest: MakeObject: kind " + kind)
}

var (
	objNamespaces = []string{"default", "team"}
	objNames      = []string{"a", "b", "c"}
)

func namespaced(kind string) bool { return kind != "Namespace" && kind != "PriorityClass" }

// objKey is "Kind namespace/name" or "Kind name".
func objKey(kind, ns, name string) string {
	if namespaced(kind) {
		return kind + " " + ns + "/" + name
	}
	return kind + " " + name
}

// readObjects reads every object of the suite's namespaces and names
// that l shows, keyed by objKey; it fails t if a listing is out of name
// order or holds an object of another namespace.
func readObjects(t testing.TB, l Lookup) map[string]runtime.Object {
	t.Helper()
	out := map[string]runtime.Object{}
	put := func(kind, ns, name string, o runtime.Object, isNil bool) {
		if !isNil {
			out[objKey(kind, ns, name)] = o
		}
	}
	for _, name := range objNames {
		pc := l.PriorityClass(name)
		put("PriorityClass", "", name, pc, pc == nil)
	}
	for _, ns := range append(slices.Clone(objNamespaces), objNames...) {
		n := l.Namespace(ns)
		put("Namespace", "", ns, n, n == nil)
	}
	for _, ns := range objNamespaces {
		var svcNames, pdbNames []string
		for _, s := range l.Services(ns) {
			require.Equal(t, ns, s.Namespace, "Services(%q) lists %s/%s", ns, s.Namespace, s.Name)
			svcNames = append(svcNames, s.Name)
			put("Service", ns, s.Name, s, false)
		}
		for _, p := range l.PodDisruptionBudgets(ns) {
			require.Equal(t, ns, p.Namespace, "PodDisruptionBudgets(%q) lists %s/%s", ns, p.Namespace, p.Name)
			pdbNames = append(pdbNames, p.Name)
			put("PodDisruptionBudget", ns, p.Name, p, false)
		}
		require.True(t, slices.IsSorted(svcNames), "Services(%q) not in name order: %v", ns, svcNames)
		require.True(t, slices.IsSorted(pdbNames), "PodDisruptionBudgets(%q) not in name order: %v", ns, pdbNames)
		for _, name := range objNames {
			rc := l.ReplicationController(ns, name)
			put("ReplicationController", ns, name, rc, rc == nil)
			rs := l.ReplicaSet(ns, name)
			put("ReplicaSet", ns, name, rs, rs == nil)
			ss := l.StatefulSet(ns, name)
			put("StatefulSet", ns, name, ss, ss == nil)
		}
	}
	return out
}

// RunObjects checks every rule of the objects part of the contract on
// fresh stores from newStore, then runs [RandomObjects] over
// [RandomSeeds] seeds.
func RunObjects(t *testing.T, newStore func() ObjectStore) {
	t.Run("objects are found by kind, namespace and name", func(t *testing.T) {
		s := newStore()
		want := map[string]runtime.Object{}
		for _, kind := range Kinds {
			for _, ns := range objNamespaces {
				for _, name := range []string{"c", "a"} { // out of order: listings sort
					o := MakeObject(kind, ns, name, 0)
					require.NoError(t, s.AddObject(o), objKey(kind, ns, name))
					want[objKey(kind, ns, name)] = o
				}
			}
		}
		got := readObjects(t, s.Lookup())
		require.Len(t, got, len(want))
		for k, o := range want {
			assert.Same(t, o, got[k], k)
		}
		l := s.Lookup()
		assert.Nil(t, l.Services("other"))
		assert.Nil(t, l.ReplicaSet("default", "b"))
		assert.Nil(t, l.ReplicaSet("other", "a"))
		assert.Nil(t, l.PriorityClass("b"))
	})

	t.Run("repeated adds and updates replace the object", func(t *testing.T) {
		for _, kind := range Kinds {
			s := newStore()
			v0, v1, v2 := MakeObject(kind, "default", "a", 0), MakeObject(kind, "default", "a", 1), MakeObject(kind, "default", "a", 2)
			require.NoError(t, s.UpdateObject(v0), "an update of an unknown object adds it")
			require.Equal(t, map[string]runtime.Object{objKey(kind, "default", "a"): v0}, readObjects(t, s.Lookup()), kind)
			require.NoError(t, s.AddObject(v1))
			require.Equal(t, map[string]runtime.Object{objKey(kind, "default", "a"): v1}, readObjects(t, s.Lookup()), kind)
			require.NoError(t, s.UpdateObject(v2))
			got := readObjects(t, s.Lookup())
			require.Len(t, got, 1, kind)
			assert.Same(t, v2, got[objKey(kind, "default", "a")], kind)
		}
	})

	t.Run("deleted objects are gone", func(t *testing.T) {
		for _, kind := range Kinds {
			s := newStore()
			require.NoError(t, s.AddObject(MakeObject(kind, "default", "a", 0)))
			b := MakeObject(kind, "default", "b", 0)
			require.NoError(t, s.AddObject(b))
			// The delete's object may be stale: the key decides.
			require.NoError(t, s.RemoveObject(MakeObject(kind, "default", "a", 7)), kind)
			require.Equal(t, map[string]runtime.Object{objKey(kind, "default", "b"): b}, readObjects(t, s.Lookup()), kind)
			require.NoError(t, s.RemoveObject(MakeObject(kind, "default", "a", 0)), "%s: a second delete is a no-op", kind)
			require.NoError(t, s.RemoveObject(MakeObject(kind, "team", "c", 0)), "%s: unknown: no-op", kind)
			require.Equal(t, map[string]runtime.Object{objKey(kind, "default", "b"): b}, readObjects(t, s.Lookup()), kind)
		}
	})

	t.Run("snapshots do not change", func(t *testing.T) {
		s := newStore()
		for _, kind := range Kinds {
			require.NoError(t, s.AddObject(MakeObject(kind, "default", "a", 0)))
		}
		before := s.Lookup()
		want := readObjects(t, before)
		svcs := before.Services("default")
		for _, kind := range Kinds {
			require.NoError(t, s.AddObject(MakeObject(kind, "default", "a", 1)))
			require.NoError(t, s.AddObject(MakeObject(kind, "default", "b", 1)))
			require.NoError(t, s.RemoveObject(MakeObject(kind, "default", "a", 1)))
		}
		require.Equal(t, want, readObjects(t, before))
		require.Equal(t, []*v1.Service{want["Service default/a"].(*v1.Service)}, svcs, "a listing handed out does not change")
		require.Len(t, readObjects(t, s.Lookup()), len(Kinds))
	})

	t.Run("bad objects change nothing", func(t *testing.T) {
		s := newStore()
		for _, kind := range Kinds {
			require.NoError(t, s.AddObject(MakeObject(kind, "default", "a", 0)))
		}
		before := readObjects(t, s.Lookup())
		for _, c := range BadObjects() {
			for _, op := range []struct {
				name string
				call func(runtime.Object) error
			}{{"add", s.AddObject}, {"update", s.UpdateObject}} {
				err := op.call(c.Obj)
				require.Error(t, err, "%s %s", op.name, c.Name)
				for _, m := range c.InMsg {
					assert.Contains(t, err.Error(), m, "%s %s", op.name, c.Name)
				}
				require.Equal(t, before, readObjects(t, s.Lookup()), "%s %s", op.name, c.Name)
			}
			if c.KeyOnly {
				continue // a delete reads only the key: these are valid deletes
			}
			err := s.RemoveObject(c.Obj)
			require.Error(t, err, "remove %s", c.Name)
			require.Equal(t, before, readObjects(t, s.Lookup()), "remove %s", c.Name)
		}
	})

	t.Run("random", func(t *testing.T) {
		for seed := range uint64(RandomSeeds) {
			RandomObjects(t, seed, RandomSteps, map[string]ObjectStore{"store": newStore()})
			if t.Failed() {
				return
			}
		}
	})
}

// BadObject is one bad object of [BadObjects].
type BadObject struct {
	Name  string
	Obj   runtime.Object
	InMsg []string // what the error must mention (object, field)
	// KeyOnly: only the content is bad; the key is valid, so a delete
	// of it is not an error.
	KeyOnly bool
}

// BadObjects are the objects every store must reject, each with what its
// error must say.
func BadObjects() []BadObject {
	badExpr := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near", Values: []string{"x"}}}}
	badKey := &metav1.LabelSelector{MatchLabels: map[string]string{"bad key!": "x"}}
	never := v1.PreemptionPolicy("Sometimes")
	one, pct := intstr.FromInt32(1), intstr.FromString("50%")
	bad := intstr.FromString("lots")
	meta := metav1.ObjectMeta{Namespace: "default", Name: "x"}
	return []BadObject{
		{Name: "nil", Obj: nil, InMsg: []string{"nil"}},
		{Name: "typed nil Service", Obj: (*v1.Service)(nil), InMsg: []string{"Service", "nil"}},
		{Name: "unsupported type", Obj: &v1.ConfigMap{ObjectMeta: meta}, InMsg: []string{"ConfigMap"}},
		{Name: "Service without name", Obj: &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default"}}, InMsg: []string{"Service", "metadata.name"}},
		{Name: "Namespace without name", Obj: &v1.Namespace{}, InMsg: []string{"Namespace", "metadata.name"}},
		{Name: "PriorityClass without name", Obj: &schedulingv1.PriorityClass{}, InMsg: []string{"PriorityClass", "metadata.name"}},
		{Name: "Service selector", Obj: &v1.Service{ObjectMeta: meta, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "bad value!"}}},
			InMsg: []string{"Service default/x", "spec.selector"}, KeyOnly: true},
		{Name: "ReplicationController selector", Obj: &v1.ReplicationController{ObjectMeta: meta, Spec: v1.ReplicationControllerSpec{Selector: map[string]string{"bad key!": "x"}}},
			InMsg: []string{"ReplicationController default/x", "spec.selector"}, KeyOnly: true},
		{Name: "ReplicaSet operator", Obj: &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{Selector: badExpr}},
			InMsg: []string{"ReplicaSet default/x", "spec.selector", "Near"}, KeyOnly: true},
		{Name: "StatefulSet key", Obj: &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{Selector: badKey}},
			InMsg: []string{"StatefulSet default/x", "spec.selector"}, KeyOnly: true},
		{Name: "PodDisruptionBudget selector", Obj: &policyv1.PodDisruptionBudget{ObjectMeta: meta, Spec: policyv1.PodDisruptionBudgetSpec{Selector: badExpr}},
			InMsg: []string{"PodDisruptionBudget default/x", "spec.selector"}, KeyOnly: true},
		{Name: "PodDisruptionBudget both", Obj: &policyv1.PodDisruptionBudget{ObjectMeta: meta, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, MaxUnavailable: &pct}},
			InMsg: []string{"PodDisruptionBudget default/x", "spec.maxUnavailable"}, KeyOnly: true},
		{Name: "PodDisruptionBudget percentage", Obj: &policyv1.PodDisruptionBudget{ObjectMeta: meta, Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &bad}},
			InMsg: []string{"PodDisruptionBudget default/x", "spec.minAvailable"}, KeyOnly: true},
		{Name: "PriorityClass preemptionPolicy", Obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "x"}, PreemptionPolicy: &never},
			InMsg: []string{"PriorityClass x", "preemptionPolicy"}, KeyOnly: true},
		{Name: "PriorityClass value", Obj: &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Value: 2_000_000_000},
			InMsg: []string{"PriorityClass x", "value"}, KeyOnly: true},
		{Name: "Namespace with a namespace", Obj: &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "default"}},
			InMsg: []string{"Namespace x", "metadata.namespace"}, KeyOnly: true},
		{Name: "Namespace labels", Obj: &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "x", Labels: map[string]string{"a": "bad value!"}}},
			InMsg: []string{"Namespace x", "metadata.labels"}, KeyOnly: true},
	}
}

type objEvent struct {
	op  string // AddObject, UpdateObject, RemoveObject
	obj runtime.Object
	key string // objKey; "" for an object without a key (nil, no name)
	bad bool   // content invalid (an add or update must fail)
}

func (e objEvent) String() string {
	if e.key == "" {
		return fmt.Sprintf("%s(%T without a key)", e.op, e.obj)
	}
	rev := ""
	switch o := e.obj.(type) {
	case *v1.Service:
		rev = o.Spec.Selector["rev"]
	case *schedulingv1.PriorityClass:
		rev = fmt.Sprint(o.Value)
	}
	return fmt.Sprintf("%s(%s rev=%s bad=%v)", e.op, e.key, rev, e.bad)
}

// RandomObjects applies the same random sequence of object events (seeded
// by seed) to every store in stores and to a reference model (a map by
// key), and after every event checks each store's error and its
// snapshot's content against the model; it also keeps the first
// snapshot of each store and checks at the end that it never changed. A
// failure names the seed, the step, the store and the events so far.
func RandomObjects(t testing.TB, seed uint64, steps int, stores map[string]ObjectStore) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x0b1ec7))
	model := map[string]runtime.Object{}
	bads := BadObjects()
	names := slices.Sorted(maps.Keys(stores))
	var first map[string]Lookup
	var firstWant map[string]runtime.Object
	var log []string
	for step := range steps {
		var ev objEvent
		kind := Kinds[r.IntN(len(Kinds))]
		ns, name := objNamespaces[r.IntN(len(objNamespaces))], objNames[r.IntN(len(objNames))]
		switch x := r.IntN(100); {
		case x < 8:
			b := bads[r.IntN(len(bads))]
			ev = objEvent{op: []string{"AddObject", "UpdateObject", "RemoveObject"}[r.IntN(3)], obj: b.Obj, bad: true}
			if b.KeyOnly {
				ev.key = objKeyOf(b.Obj)
			}
		case x < 35:
			ev = objEvent{op: "RemoveObject", obj: MakeObject(kind, ns, name, r.IntN(3)), key: objKey(kind, ns, name)}
		default:
			ev = objEvent{op: []string{"AddObject", "UpdateObject"}[r.IntN(2)], obj: MakeObject(kind, ns, name, r.IntN(3)), key: objKey(kind, ns, name)}
		}
		log = append(log, ev.String())
		var wantErr bool
		switch {
		case ev.op == "RemoveObject" && ev.key != "":
			delete(model, ev.key)
		case ev.bad:
			wantErr = true
		case ev.op == "RemoveObject":
			wantErr = true
		default:
			model[ev.key] = ev.obj
		}
		for _, sn := range names {
			s := stores[sn]
			var err error
			switch ev.op {
			case "AddObject":
				err = s.AddObject(ev.obj)
			case "UpdateObject":
				err = s.UpdateObject(ev.obj)
			default:
				err = s.RemoveObject(ev.obj)
			}
			where := func() string {
				return fmt.Sprintf("seed %d step %d store %s; events:\n  %s", seed, step, sn, strings.Join(log, "\n  "))
			}
			if (err != nil) != wantErr {
				t.Fatalf("error = %v, want an error: %v; %s", err, wantErr, where())
			}
			if got := readObjects(t, s.Lookup()); !reflect.DeepEqual(model, got) {
				require.Equal(t, model, got, where())
			}
		}
		if step == steps/3 {
			first, firstWant = map[string]Lookup{}, maps.Clone(model)
			for _, sn := range names {
				first[sn] = stores[sn].Lookup()
			}
		}
	}
	for sn, l := range first {
		if _, live := stores[sn].(LiveLookup); live {
			continue
		}
		require.Equal(t, firstWant, readObjects(t, l), "seed %d store %s: a snapshot taken at step %d changed", seed, sn, steps/3)
	}
}

// objKeyOf is objKey of a suite object with a valid key.
func objKeyOf(o runtime.Object) string {
	m := o.(metav1.Object)
	kind := strings.TrimPrefix(fmt.Sprintf("%T", o), "*")
	kind = kind[strings.IndexByte(kind, '.')+1:]
	return objKey(kind, m.GetNamespace(), m.GetName())
}
