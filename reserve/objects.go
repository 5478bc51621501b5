package reserve

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// AddObject reports a cluster object other than a node or pod from the
// informer — a Namespace, Service, ReplicationController, ReplicaSet,
// StatefulSet, PriorityClass or PodDisruptionBudget — under the informer
// contract, as snapshot.Cache.AddObject: a known object (same kind,
// namespace and name) is replaced. The ledger's snapshots carry the
// objects and their look-ups (snapshot.Snapshot.Services, ...), so the
// scheduling cycle finds them on the snapshot it schedules on. Errors
// (nil, an unsupported type, an empty metadata.name, an invalid selector,
// ...) wrap [ErrInvalid] and snapshot.ErrInvalidObject, name the object
// and field, and change nothing. Objects are not journaled (the informer
// lists them again after a restart). O(objects of the kind in the
// namespace) at worst; see snapshot's Cache.
func (l *Ledger) AddObject(obj runtime.Object) (err error) {
	defer named("AddObject", &err)
	return l.addObject(obj)
}

// UpdateObject is [Ledger.AddObject]: an update of an unknown object adds
// it.
func (l *Ledger) UpdateObject(obj runtime.Object) (err error) {
	defer named("UpdateObject", &err)
	return l.addObject(obj)
}

func (l *Ledger) addObject(obj runtime.Object) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.view.AddObject(obj); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	l.ver++
	return nil
}

// RemoveObject removes the object with obj's kind, namespace and name; an
// unknown one is a no-op. Only the key is read (a stale tombstone object
// removes the current one). Errors as [Ledger.AddObject]'s for nil, an
// unsupported type or an empty metadata.name.
func (l *Ledger) RemoveObject(obj runtime.Object) (err error) {
	defer named("RemoveObject", &err)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.view.RemoveObject(obj); err != nil {
		return fmt.Errorf("%w: %w", err, ErrInvalid)
	}
	l.ver++
	return nil
}
