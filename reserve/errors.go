package reserve

import "errors"

// Sentinel errors. Every error the ledger returns wraps one of these (check
// with errors.Is) and names the pod, node or reservation it is about. A pod
// that does not fit is not an error: it is a non-nil []Insufficient.
var (
	// ErrInvalid: bad input — a nil pod or node, an empty name, a negative
	// quantity, a malformed selector, a pod listed twice in a gang.
	ErrInvalid = errors.New("reserve: invalid argument")
	// ErrNodeNotFound: Reserve, AddReservation or RemoveNode names a node
	// the informer has not reported (or has removed). Such errors also wrap
	// snapshot.ErrNodeNotFound, so one check serves a Cache and a Ledger.
	ErrNodeNotFound = errors.New("reserve: node not found")
	// ErrConflict: the pod is already held or bound on another node.
	ErrConflict = errors.New("reserve: pod held or bound on another node")
	// ErrNotHeld: Confirm of a pod the ledger neither holds nor sees bound.
	ErrNotHeld = errors.New("reserve: pod not held")
	// ErrReservationExists: AddReservation with a name already in use.
	ErrReservationExists = errors.New("reserve: reservation already exists")
	// ErrReservationNotFound: a reservation name that is not there.
	ErrReservationNotFound = errors.New("reserve: reservation not found")
	// ErrJournal: the journal writer failed. The operation that takes
	// capacity was not applied; see [Ledger.SetJournal].
	ErrJournal = errors.New("reserve: journal write failed")
	// ErrCorruptJournal: a journal record is complete but malformed (bad
	// checksum, bad JSON, impossible transition). A torn tail is not
	// corruption; see [ReplayResult].
	ErrCorruptJournal = errors.New("reserve: corrupt journal")
	// ErrNotEmpty: Replay into a ledger that already holds pods or
	// reservations.
	ErrNotEmpty = errors.New("reserve: ledger not empty")
)
