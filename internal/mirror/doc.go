// Package mirror runs schedkit's scorers, filters and ledger inside another
// scheduler that keeps its own node list — kube-scheduler's cycle
// snapshot, for the adapter in framework/kubescheduler, or any host whose
// node entries carry a node object, their pods and a generation bumped on
// every change. A [Mirror] keeps a [snapshot.Cache] equal to that list and
// finds schedkit's NodeInfo for one of the host's entries without a lock or
// an allocation; [Mirror.Score] and [Mirror.Filter] prepare a scorer or a
// filter for one pod and answer per host entry. All the logic of an
// adapter lives here and is tested here: the adapter only converts types
// and maps outcomes to the host's status codes.
//
// Layer: above snapshot, score, framework and reserve (it imports them);
// only the adapters import it. It is internal (Go's internal rule is by
// import path, so the framework/kubescheduler module may import it): its
// types follow the adapters' needs, and a change to them is never an API
// change.
//
// # Usage
//
// Describe the host's entry type N with a [Source], make one Mirror per
// scheduler profile with [New], and call [Mirror.Sync] with the host's
// whole node list once per scheduling cycle — or [Mirror.SyncLazy], when
// every caller of the cycle reads the mirror only through look-ups of the
// entries it is given (filters, and scorers that ignore the cluster:
// internal/scoring.IgnoresCluster). Then, per pod:
//
//	scores, err := m.Score(scorer, pod, candidates, par) // nil when the scorer skips the pod; par: the host's workers, or nil
//	v, err := scores.Of(entry)                       // per candidate, no allocation
//
//	f, pre, err := m.Filter(filter, pod, true)       // true: also ask the profile's ledger
//	reasons, err := f.Check(entry)                   // nil: the node passes
//
// With a ledger set ([Mirror.SetLedger]), scorers read the ledger's view
// (holds and named reservations count as requested) and a filter prepared
// with the ledger refuses a node the ledger would refuse at Reserve.
//
// # Concurrency
//
// Sync calls are serialised by a mutex. Lookup, Convert, Current,
// [Scores.Of] and [Filtering.Check] are safe for concurrent use, also
// alongside Sync: they read the last published view without locking,
// except that a look-up that finds an entry changed since it was mirrored
// rebuilds that node and publishes it under the mutex (waiting for a Sync
// under way; once: concurrent look-ups of the same entry wait and take
// the rebuilt node), which allocates.
//
// # Cost
//
// Sync: one pass of O(len(list)) identity and generation comparisons when
// the list holds the same entries as last time, plus O(pods on the
// changed nodes) (only new pods are parsed) and a publish that copies
// O(len(list)/256) chunk pointers and 256 entries per changed node (the
// view's position→entry array is chunked and shares unchanged chunks), so
// its allocation does not grow with the list; O(len(list)) look-ups by
// name when entries were added, removed or moved, which also rebuild the
// table from entry to list position. SyncLazy: O(len(list)) identity
// comparisons of contiguous memory, no entry read, when the list holds
// the same entries; the changed nodes are rebuilt as they are looked up,
// O(pods on the node) and a publish each. Lookup and a passing
// Filtering.Check: a check of the calling goroutine's hint (the position
// its last look-up found, or the next: a host that walks its list in order
// per worker reads it sequentially; see hints.go) or else a hash of the
// entry (its identity) and a probe in that flat table — whose 16-byte
// slots hold each entry's full hash, so that for a list of one pointer
// type (upstream's NodeInfos) a hash match is the entry, and no list entry
// is read — and a generation read compared with the one the view keeps
// beside the NodeInfo (no map, no load of the mirror's entry) plus the
// filter's own work, no allocation. Score finds a cycle's candidates once
// per Sync for all the scorers, by position when they come in list order,
// and records each one's index at its list position (O(len(list)) bytes);
// Scores.Of checks the goroutine's hint in the candidates the same way,
// else probes and reads that record (no read of the host's node).
package mirror
