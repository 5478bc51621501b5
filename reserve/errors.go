package reserve

import (
	"errors"
	"fmt"

	"github.com/schedkit/schedkit/snapshot"
)

// nodeNotFoundError is [ErrNodeNotFound]: one message, two sentinels
// (errors.Is matches it to snapshot.ErrNodeNotFound too), so a wrapped
// error does not repeat "node not found" once per sentinel.
type nodeNotFoundError struct{}

func (nodeNotFoundError) Error() string { return "reserve: node not found" }

// Is reports whether target is snapshot.ErrNodeNotFound (errors.Is
// compares ErrNodeNotFound itself by ==).
func (nodeNotFoundError) Is(target error) bool { return target == snapshot.ErrNodeNotFound }

// Sentinel errors. Every error the ledger returns wraps one of these (check
// with errors.Is), starts with the method that returned it
// ("reserve: Ledger.UpdatePod: ...", "reserve: Import: ...") and names the pod, node or
// reservation it is about. A pod
// that does not fit is not an error: it is a non-nil []Insufficient.
var (
	// ErrInvalid: bad input — a nil pod or node, an empty name, a negative
	// quantity, a malformed selector, a pod listed twice in a gang.
	ErrInvalid = errors.New("reserve: invalid argument")
	// ErrNodeNotFound: Reserve, AddReservation or RemoveNode names a node
	// the informer has not reported (or has removed). errors.Is also
	// matches it to snapshot.ErrNodeNotFound, so one check serves a Cache
	// and a Ledger; its text says "node not found" once.
	ErrNodeNotFound error = nodeNotFoundError{}
	// ErrConflict: Reserve, ReserveUntil or ReserveGang of a pod the
	// ledger already holds or has bound on another node. An informer
	// report of a bound pod on another node than the one it is bound to
	// is ErrInvalid (spec.nodeName cannot change; see Ledger.AddPod).
	ErrConflict = errors.New("reserve: pod held or bound on another node")
	// ErrNotHeld: Confirm of a pod the ledger neither holds nor sees bound.
	ErrNotHeld = errors.New("reserve: pod not held")
	// ErrReservationExists: AddReservation with a name already in use.
	ErrReservationExists = errors.New("reserve: reservation already exists")
	// ErrReservationNotFound: a reservation name that is not there.
	ErrReservationNotFound = errors.New("reserve: reservation not found")
	// ErrJournal: the journal's writer failed, now or before: the change
	// was not applied, and the ledger refuses the caller's changes until a
	// new writer is attached; see [Ledger.SetJournal].
	ErrJournal = errors.New("reserve: journal write failed")
	// ErrCorruptJournal: a journal is damaged before its end — a checksum
	// that does not match, a length that cannot be, bytes after the last
	// intact record that are not a torn write, bad JSON, an impossible
	// transition. A torn tail is not corruption; see [ReplayResult] and
	// [CorruptJournalError].
	ErrCorruptJournal = errors.New("reserve: corrupt journal")
	// ErrCorruptExport: an [Import] document fails its integrity check
	// (truncated, altered, without a checksum, or with neither version nor
	// checksum: not an Export document).
	ErrCorruptExport = errors.New("reserve: corrupt export")
	// ErrDuplicate: an [Import] document lists a node, pod or reservation
	// twice.
	ErrDuplicate = errors.New("reserve: duplicate object")
	// ErrNotEmpty: Replay into a ledger that already holds pods or
	// reservations.
	ErrNotEmpty = errors.New("reserve: ledger not empty")
)

// named prefixes *err, when not nil, with the entry point that returns it:
// "reserve: Ledger.<op>: ...". Every exported Ledger method that can fail
// defers it once, so each error names its entry point exactly once and
// the helpers below add only the object and field.
func named(op string, err *error) {
	if *err != nil {
		*err = fmt.Errorf("reserve: Ledger.%s: %w", op, *err)
	}
}
