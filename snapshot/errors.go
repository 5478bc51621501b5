package snapshot

import "errors"

// Sentinel errors. Every error returned by this package wraps one of these
// (check with errors.Is) and names the object and field it is about.
var (
	// ErrNegativeQuantity: a request, limit, overhead or allocatable
	// quantity below zero.
	ErrNegativeQuantity = errors.New("snapshot: negative quantity")
	// ErrInvalidObject: an object the model cannot hold (nil, no name).
	ErrInvalidObject = errors.New("snapshot: invalid object")
	// ErrNodeNotFound: an operation names a node that is not there.
	ErrNodeNotFound = errors.New("snapshot: node not found")
	// ErrNodeExists: a node added twice.
	ErrNodeExists = errors.New("snapshot: node already exists")
	// ErrPodNotFound: an operation names a pod that is not there.
	ErrPodNotFound = errors.New("snapshot: pod not found")
	// ErrPodExists: a pod added twice.
	ErrPodExists = errors.New("snapshot: pod already exists")
	// ErrNoFork: Commit or Revert at depth 0, with no layer open (changes
	// made straight after Snapshot.Fork are the base's and stay).
	ErrNoFork = errors.New("snapshot: no Fork layer open to commit or revert (depth 0): call Fork.Fork before the changes to keep or discard")
)
