package framework

import "errors"

// Sentinel errors. Every error this package returns wraps one of these
// (check with errors.Is) and names the object and field it is about. A pod
// that does not fit is never an error: it is a [Diagnosis].
var (
	// ErrInvalidConfig: a Config or plugin argument that cannot be used
	// (a percentage outside [0, 100], an invalid resource name, a
	// malformed scheduler-enforced node selector).
	ErrInvalidConfig = errors.New("framework: invalid configuration")
	// ErrInvalidPod: a pod the scheduler cannot handle (nil, no name,
	// already queued).
	ErrInvalidPod = errors.New("framework: invalid pod")
	// ErrAlreadyPlaced: a pod pending in a [Loop] that the ledger already
	// holds, or reports bound, somewhere ([Attempt.Skipped]); the Loop
	// dropped it.
	ErrAlreadyPlaced = errors.New("framework: pod already placed")
	// ErrPodDeleting: a pod pending in a [Loop] whose
	// metadata.deletionTimestamp is set ([Attempt.Skipped]); the Loop
	// dropped it without a cycle, as upstream does (v1.37 schedule_one.go
	// skipPodSchedule).
	ErrPodDeleting = errors.New("framework: pod is being deleted")
)
