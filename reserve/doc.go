// Package reserve is the reservation ledger: it holds capacity for pods
// between the moment a scheduler picks a node and the moment the cluster
// reports the pod bound — the state upstream kube-scheduler keeps as
// "assumed pods" in its cache and that Reserve/Unreserve plugins keep on the
// side — as a library that needs no cluster.
//
// A [Ledger] is the one object a scheduler feeds: informer events
// (AddNode, UpdateNode, RemoveNode, AddPod, UpdatePod, RemovePod, under
// the informer contract snapshot.Cache follows too, see [Ledger]: a pod may
// arrive before its node, a removed node's pods wait for it, unbound pods
// are not counted, terminal ones are deleted) and its own decisions ([Ledger.Reserve],
// [Ledger.Unreserve], [Ledger.Confirm]). It never double-counts and never
// leaks:
//
//   - a pod is in at most one [Phase] — Held, Confirmed or Bound — on one
//     node; the informer reporting a held or confirmed pod bound replaces
//     that record exactly once, whichever of Confirm and the report comes
//     first;
//   - Unreserve is idempotent and valid for a pod never reserved;
//   - a deleted pod frees what it held or used at once;
//   - [Ledger.ReserveGang] lands every member or none;
//   - holds do not expire unless the caller asks ([Ledger.ReserveUntil] and
//     [Ledger.Expire], with the caller's clock).
//
// Fit follows upstream NodeResourcesFit (kube-scheduler v1.37
// noderesources/fit.go): pod count, cpu, memory, ephemeral storage and
// scalar resources, each pod request against allocatable minus bound,
// confirmed and held pods and named reservations. A pod that does not fit
// gets reasons as values ([Insufficient]), not an error.
//
// Named reservations ([Reservation]) hold capacity on a node for future
// pods of an owner (label selector or controller reference); matching pods
// draw on them first. A scheduling cycle for such a pod reads
// [Ledger.SnapshotFor], where the room its reservations hold for it is
// free, so filters and [Ledger.Fits] agree. A pod whose hold (and share)
// was released and that is then reported bound on the reservation's node
// after all — a late bind — draws on the reservation again.
//
// # Usage
//
//	l := reserve.New()
//	// informer handlers (pending and terminal pods may be passed too):
//	l.AddNode(node); l.AddPod(pod); l.RemovePod(snapshot.KeyOf(pod)) ...
//	// each scheduling cycle:
//	snap, _ := l.SnapshotFor(podInfo) // holds count as requested
//	// ... filter and score on snap, pick node ...
//	reasons, err := l.Reserve(podInfo, node)
//	// bind asynchronously; then
//	l.Confirm(key)   // bind succeeded (or just wait for the informer)
//	l.Unreserve(key) // bind failed
//
// # Durability
//
// [Ledger.SetJournal] appends every change of the ledger's own state —
// holds, confirmations, named reservations and their shares — to a
// caller's io.Writer, one Write per record (a gang is one record). Nodes
// and bound pods are not journaled: they are the API server's, and an
// informer lists them again after a restart.
//
// Format (version 2): each record is a 12-byte header — payload length
// (uint32, big-endian, 1 B to 1 GiB), a CRC-32C of the length, a CRC-32C of
// the first 8 header bytes and the payload — then the payload, one JSON
// object. The first record is a begin record holding the whole own state
// at attach time, so one record rebuilds it (a later begin record replaces
// the state). [Ledger.Replay] applies every intact record and tells a torn
// tail (a crash cut the last record short, perhaps leaving NUL bytes after
// it: [ReplayResult.Torn], not an error) from corruption (anything else:
// a bad checksum, a length that cannot be, garbage, a torn record with
// intact records after it — a [*CorruptJournalError] with the record index
// and byte offset, and the ledger unchanged). It never drops an intact
// record silently.
// Version 1 journals are not read.
//
// The rule after a write error: the journal is the truth. A change is
// applied if and only if its whole record reached the writer (a record
// stored whole with an error, as from a failed fsync after the write,
// counts as written). The first error breaks the journal: the caller's
// decisions (Reserve, ReserveGang, AddReservation, RemoveReservation,
// Confirm, Unreserve, Expire) are refused and change nothing until a new
// writer is attached; the informer's facts (pods bound or deleted, node
// events) and Reconcile still apply, since a restart derives them again.
// So the ledger always equals what a restart from the bytes written gives.
//
// Recovery after a crash:
//
//	l := reserve.New()
//	res, err := l.Replay(file) // holds in flight when the process died
//	// err: see CorruptJournalError (keep the file; restore a copy, or
//	// truncate it to err's Offset, losing the records it counts)
//	l.SetJournal(newFile)      // a compacted journal (or truncate file to
//	                           // res.Bytes and keep appending to it)
//	// start informers: pods reported bound settle their holds
//	l.Reconcile(podExists)     // after sync: drop holds of deleted pods
//
// Recovery from a write error while running ([Ledger.JournalErr] non-nil):
// attach a new file with SetJournal (its begin record holds the whole
// state); once it is durable, it replaces the old file. Never append to the
// failed file without truncating it to the offset the error names.
//
// [Ledger.Export] and [Import] save and load the whole state — nodes, bound
// pods, holds, reservations — as one JSON document with a CRC-32C over its
// state (format version 2; version 1, without a checksum, is not read), for
// simulators and checkpoints; two ledgers in the same state export the
// same bytes. Import rejects a truncated or altered document
// ([ErrCorruptExport]) and an object listed twice ([ErrDuplicate]).
//
// # Concurrency
//
// A Ledger is safe for concurrent use: every method takes one mutex, so of
// two goroutines racing for a node's last capacity exactly one wins.
// [Ledger.Snapshot] returns an immutable snapshot any number of goroutines
// may read. The ledger reads no clock, starts no goroutine and logs nothing.
//
// # Cost
//
// Reserve and Unreserve are O(resources of the pod): one hash of the pod
// key (probing the ledger's own open-addressing tables of held and bound
// pods), one node-name look-up, and the fit check on dense per-node
// vectors. They allocate nothing in steady state (no journal, no named
// reservation on the node); see BenchmarkReserveUnreserve. Informer events cost O(resources + pods on the node), as
// [snapshot.Cache] events do. [Ledger.Snapshot] is O(1) when nothing
// changed, else O(holds + reservations) map look-ups plus a copy of each
// node changed since the previous snapshot — it does not rebuild.
//
// # Layer
//
// Above snapshot, beside score: reserve imports snapshot and internal
// packages only — no scorer, no device policy (gpushare) — and framework
// and replay build on it. The layers are those package schedkit's doc lists
// (the repository root's doc.go), checked by its TestLayering.
package reserve
