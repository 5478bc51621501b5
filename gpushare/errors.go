package gpushare

import "errors"

// Errors returned for bad input. They are wrapped with %w and a message
// naming the field; test with errors.Is.
var (
	// ErrInvalidTask: a Task field is out of range (see Task.Validate).
	ErrInvalidTask = errors.New("gpushare: invalid task")
	// ErrInvalidNode: a NodeState field is out of range (see NodeState.Validate).
	ErrInvalidNode = errors.New("gpushare: invalid node")
	// ErrInvalidWorkload: a workload has no shape, a bad weight or a bad coverage.
	ErrInvalidWorkload = errors.New("gpushare: invalid workload")
	// ErrInvalidPlacement: NodeState.Place was given devices that cannot host the task.
	ErrInvalidPlacement = errors.New("gpushare: invalid placement")
)
