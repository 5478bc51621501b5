package mirror

import (
	"sync/atomic"
	"unsafe"
)

// hints guesses where the next look-up of a goroutine will find its
// entry: where its last look-up found one, or the position after that.
// A host walks its node list in order, each worker goroutine a run of
// consecutive entries, running each of its plugins on an entry before
// the next (kube-scheduler's filters visit nodes[(start+i) % n] and its
// scorers the candidates, in chunks per worker), so a guess is usually
// right, and checking it reads the list sequentially (which the
// hardware prefetches) where a hash probe is a cache miss in a table as
// large as the list. A guess is only a guess: the caller compares the
// entry there with the one it looks up, and probes on a mismatch, so a
// wrong hint costs two comparisons and never a wrong answer.
//
// Goroutines are told apart by the address of a variable on their stack
// (a goroutine's stack is its own; one that grows moves, and only loses
// its hint), hashed to one of hintSlots cursors, each on its own cache
// line so that goroutines running on different cores do not write one
// line. Two goroutines sharing a cursor only guess worse. The zero value
// is ready; safe for concurrent use (the cursors are atomics, read and
// written without ordering).
type hints struct {
	_     [64]byte // the first cursor's line shared with no other field
	slots [hintSlots]struct {
		next atomic.Int32
		_    [60]byte
	}
}

// hintSlots is the number of cursors, well above the workers a host
// runs at once (kube-scheduler's parallelism: 16).
const (
	hintBits  = 6
	hintSlots = 1 << hintBits
)

// cursor returns the calling goroutine's cursor. O(1), no allocation.
func (h *hints) cursor() *atomic.Int32 {
	var mark byte
	a := uint64(uintptr(unsafe.Pointer(&mark)))
	// Frames of one goroutine's calls at one depth share the address;
	// stacks are at least 2 KiB apart. Fibonacci hashing of the 1 KiB
	// block picks the slot.
	return &h.slots[(a>>10)*0x9e3779b97f4a7c15>>(64-hintBits)].next
}
