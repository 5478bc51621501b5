package reserve

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/snapshot"
)

// Journal format, version 2
//
// A journal is a sequence of records. Each record is a frame:
//
//	offset 0   length   uint32, big-endian: payload bytes, 1 .. 1 GiB
//	offset 4   hcrc     uint32, big-endian: CRC-32C (Castagnoli) of bytes 0..3
//	offset 8   crc      uint32, big-endian: CRC-32C of bytes 0..7 and the payload
//	offset 12  payload  one JSON object with an "op" field
//
// The header checksum lets the reader trust a length before it reads the
// payload: a damaged length is corruption, never mistaken for a record
// that runs past the end of the file. The record checksum covers the
// header and the payload.
//
// The first record is a begin record, {"op":"begin","version":2,...},
// holding the ledger's whole own state when the journal was attached (its
// reservations, holds with their pods, and the shares of bound pods), so
// one record — written, and torn, as a unit — rebuilds it. Then comes one
// record per change of that state (a gang is one record). A begin record
// later in the stream replaces the state (a compacted image appended to
// the same stream).
//
// Only state that would die with the process is journaled: holds,
// confirmations, named reservations and their shares, and the moments the
// informer's reports settled them ("settle") or deletes freed them. Nodes
// and bound pods are the API server's; after a restart the informer lists
// them again.
//
// Version 1 (an 8-byte header whose checksum covered the payload only, and
// an image of many records) is not read: a damaged length in it could pass
// for a torn tail. Replay names it in its error.

const (
	journalVersion = 2
	maxRecord      = 1 << 30
	frameHeader    = 12
)

const (
	opBegin             = "begin"
	opHold              = "hold"    // holds (one, or a whole gang)
	opConfirm           = "confirm" // pods[0] held -> confirmed
	opSettle            = "settle"  // informer reported pods[0] bound on node
	opUnreserve         = "unreserve"
	opReservation       = "reservation"
	opRemoveReservation = "removeReservation"
)

// Late binds (see Ledger.lapsed): opUnreserve releases holds and lets
// their shares lapse; opRemove releases what deleted pods held or drew
// and forgets their lapsed shares; opDraw is a late bind's share of the
// reservation its share lapsed from (draws[0]). The lapsed shares
// themselves travel in the begin record's image (lapsed).
const (
	opRemove = "remove"
	opDraw   = "draw"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type keyJSON struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func toKeyJSON(k snapshot.PodKey) keyJSON { return keyJSON{k.Namespace, k.Name} }
func (k keyJSON) key() snapshot.PodKey    { return snapshot.PodKey{Namespace: k.Namespace, Name: k.Name} }

type holdJSON struct {
	Pod         *v1.Pod          `json:"pod"`
	Node        string           `json:"node"`
	Confirmed   bool             `json:"confirmed,omitempty"`
	Deadline    *time.Time       `json:"deadline,omitempty"`
	Reservation string           `json:"reservation,omitempty"`
	Drawn       map[string]int64 `json:"drawn,omitempty"`
	// Devices are the GPU devices the hold records (PodInfo.Devices)
	// when the pod object does not name them (a choice made by the
	// framework or the ledger's chooser); absent in journals written
	// before they were kept, whose holds then record no devices.
	Devices []int `json:"devices,omitempty"`
}

type drawJSON struct {
	Pod         keyJSON          `json:"pod"`
	Reservation string           `json:"reservation"`
	Drawn       map[string]int64 `json:"drawn"`
}

type record struct {
	Op      string `json:"op"`
	Version int    `json:"version,omitempty"`
	// begin: the image (Holds too); hold: the holds.
	Reservations []Reservation `json:"reservations,omitempty"`
	Holds        []holdJSON    `json:"holds,omitempty"`
	Draws        []*drawJSON   `json:"draws,omitempty"`
	Lapsed       []lapseJSON   `json:"lapsed,omitempty"`
	Pods         []keyJSON     `json:"pods,omitempty"`
	Node         string        `json:"node,omitempty"`
	Reservation  *Reservation  `json:"reservation,omitempty"`
	Name         string        `json:"name,omitempty"`
}

func vectorJSON(v *snapshot.Vector) map[string]int64 {
	if v.IsZero() {
		return nil
	}
	m := map[string]int64{}
	for i := range v.Len() {
		id := snapshot.ResourceID(i)
		if x := v.Get(id); x != 0 {
			m[string(id.Name())] = x
		}
	}
	return m
}

func parseVectorJSON(m map[string]int64) (snapshot.Vector, error) {
	var v snapshot.Vector
	for name, x := range m {
		id, ok := snapshot.Intern(v1.ResourceName(name))
		if !ok || id == snapshot.Pods {
			return v, fmt.Errorf("resource %q is not counted by the scheduler", name)
		}
		if x < 0 {
			return v, fmt.Errorf("resource %q: negative amount %d", name, x)
		}
		v.Set(id, x)
	}
	return v, nil
}

// journal is the write side.
type journal struct {
	w   io.Writer
	buf []byte
	off int64 // bytes of whole records written
	err error // sticky: the first failure
}

// appendFrame appends payload, framed, to b.
func appendFrame(b, payload []byte) []byte {
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b[start:start+4], castagnoli))
	crc := crc32.Update(crc32.Checksum(b[start:start+8], castagnoli), castagnoli, payload)
	b = binary.BigEndian.AppendUint32(b, crc)
	return append(b, payload...)
}

// append writes rec as one frame in one Write call. It returns nil when
// the whole frame reached the writer: the change is in the journal and
// must be applied — even if Write also returned an error (a write-then-
// fsync writer whose fsync failed), which is kept and breaks the journal
// for every later record. Otherwise it returns an error wrapping
// ErrJournal and the change must not be applied.
func (j *journal) append(rec *record) error {
	if j.err != nil {
		return j.err
	}
	payload, err := json.Marshal(rec)
	if err == nil && len(payload) > maxRecord {
		err = fmt.Errorf("%d bytes, more than %d", len(payload), maxRecord)
	}
	if err != nil {
		j.err = fmt.Errorf("%w: encode %s record: %w", ErrJournal, rec.Op, err)
		return j.err
	}
	j.buf = appendFrame(j.buf[:0], payload)
	n, err := j.w.Write(j.buf)
	n = min(max(n, 0), len(j.buf))
	if n == len(j.buf) {
		j.off += int64(n)
		if err != nil {
			j.err = fmt.Errorf("%w: the %s record ending at offset %d was written whole (and applied), then: %w", ErrJournal, rec.Op, j.off, err)
		}
		return nil
	}
	if err == nil {
		err = io.ErrShortWrite
	}
	j.err = fmt.Errorf("%w: %s record at offset %d: %d of %d bytes written (truncate to %d bytes before appending to this file again): %w",
		ErrJournal, rec.Op, j.off, n, len(j.buf), j.off, err)
	return j.err
}

// SetJournal attaches w as the ledger's journal, or detaches the journal
// when w is nil. It first writes a begin record holding the ledger's whole
// own state (reservations, holds, confirmations, shares), so the new
// journal alone rebuilds it: attaching a fresh writer compacts. From then
// on every change is written before it is applied, one Write call per
// record.
//
// The rule after a write error: the journal is the truth. A change is
// applied if and only if its whole record reached the writer (Write
// returned n == len(p)); a record stored whole with an error (a
// write-then-fsync writer whose fsync failed) counts as written, and the
// change is applied and reported done. The first error breaks the
// journal: from then on the caller's decisions — Reserve, ReserveUntil,
// ReserveGang, AddReservation, RemoveReservation, Confirm (all fail with
// [ErrJournal]), Unreserve (returns false), Expire (returns nil) — are
// refused and change nothing, since the journal could not say so. The
// informer's facts (AddPod, UpdatePod, AddPodInfo, RemovePod, node events)
// and [Ledger.Reconcile] still apply: after a restart the informer's list
// and Reconcile derive them again. So at every moment the ledger equals
// what a restart from the bytes written gives: informer list, Replay,
// Reconcile. The broken writer is never written to again; attach a new one
// (a fresh file: its begin record supersedes the old file) to accept
// decisions again. To keep appending to the same file, truncate it first to
// the offset the error names (a partly written record would otherwise sit
// in the middle of the journal and be reported as corruption).
//
// SetJournal changes no state; if the begin record cannot be written
// whole, it returns the error ([ErrJournal]) and the journal is broken
// (the writer holds at most a torn record, which Replay ignores). The
// ledger never calls Sync or Close: durability of w is the caller's.
// O(state); allocates the encoding.
func (l *Ledger) SetJournal(w io.Writer) (err error) {
	defer named("SetJournal", &err)
	l.mu.Lock()
	defer l.mu.Unlock()
	if w == nil {
		l.j = nil
		return nil
	}
	if err := l.leanRecord(); err != nil {
		return err
	}
	j := &journal{w: w}
	l.j = j
	_ = j.append(l.image())
	return j.err
}

// JournalErr returns the error that broke the journal, or nil (also when no
// journal is attached). While it is non-nil the ledger refuses the
// caller's decisions; see [Ledger.SetJournal].
func (l *Ledger) JournalErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.j == nil {
		return nil
	}
	return l.j.err
}

// leanRecord returns the error for the first lean record the
// ledger holds ([WithLeanPods]; a hold of a lean record): op writes the
// pod objects, which a lean record does not have. O(pods).
func (l *Ledger) leanRecord() error {
	for i := range l.recs {
		if rec := &l.recs[i]; rec.pi != nil && !rec.pi.Retained() {
			return leanError(rec.key)
		}
	}
	return nil
}

func leanError(k snapshot.PodKey) error {
	return fmt.Errorf("pod %s is a lean record (reserve.WithLeanPods, snapshot.LeanPods or snapshot.PodInfo.Lean), without the pod object it must write; use a ledger without WithLeanPods and full records: %w", k, ErrInvalid)
}

// image returns the begin record that rebuilds the ledger's own state.
func (l *Ledger) image() *record {
	rec := &record{Op: opBegin, Version: journalVersion}
	for _, name := range sortedKeys(l.res) {
		rec.Reservations = append(rec.Reservations, l.res[name].spec)
	}
	rec.Holds = l.holdsJSON()
	rec.Draws = l.boundDrawsJSON()
	rec.Lapsed = l.lapsedJSON()
	return rec
}

// lapseJSON is a lapsed share: the pod and the reservation it came from.
type lapseJSON struct {
	Pod         keyJSON `json:"pod"`
	Reservation string  `json:"reservation"`
}

// lapsedJSON lists the lapsed shares, sorted by key; nil for none.
func (l *Ledger) lapsedJSON() []lapseJSON {
	var out []lapseJSON
	for k, r := range l.lapsed {
		out = append(out, lapseJSON{Pod: toKeyJSON(k), Reservation: r.spec.Name})
	}
	slices.SortFunc(out, func(a, b lapseJSON) int { return cmpKey(a.Pod.key(), b.Pod.key()) })
	return out
}

// holdsJSON lists the holds and confirmations, sorted by key.
func (l *Ledger) holdsJSON() []holdJSON {
	idx := slices.Clone(l.owned)
	slices.SortFunc(idx, func(a, b int32) int { return cmpKey(l.recs[a].key, l.recs[b].key) })
	out := make([]holdJSON, 0, len(idx))
	for _, i := range idx {
		rec := &l.recs[i]
		out = append(out, l.holdJSON(rec.pi, l.nodes[rec.node].name, rec.phase == Confirmed, rec.deadline, l.draws[rec.key]))
	}
	return out
}

func (l *Ledger) holdJSON(pi *snapshot.PodInfo, node string, confirmed bool, deadline int64, d *draw) holdJSON {
	h := holdJSON{Pod: pi.Pod(), Node: node, Confirmed: confirmed}
	if devs, ok := pi.Devices(); ok && pi.GPU().Count > 0 {
		h.Devices = devs.AppendIndexes(nil)
	}
	if deadline != noDeadline {
		t := time.Unix(0, deadline).UTC()
		h.Deadline = &t
	}
	if d != nil {
		h.Reservation = d.res.spec.Name
		h.Drawn = vectorJSON(&d.amount)
	}
	return h
}

// boundDrawsJSON lists the shares of pods the ledger does not hold
// (reported bound, or not reported yet after a replay), sorted by key.
func (l *Ledger) boundDrawsJSON() []*drawJSON {
	var out []*drawJSON
	for k, d := range l.draws {
		if i, ok := l.rec(k); ok && l.recs[i].phase != Bound {
			continue
		}
		out = append(out, &drawJSON{Pod: toKeyJSON(k), Reservation: d.res.spec.Name, Drawn: vectorJSON(&d.amount)})
	}
	slices.SortFunc(out, func(a, b *drawJSON) int { return cmpKey(a.Pod.key(), b.Pod.key()) })
	return out
}

// holdPlan is one hold about to be applied.
type holdPlan struct {
	pi       *snapshot.PodInfo
	plan     plan
	deadline int64
}

// logHolds journals holds that take capacity; an error means "do not
// apply".
func (l *Ledger) logHolds(hs []holdPlan) error {
	if l.j == nil {
		return nil
	}
	for _, h := range hs {
		if !h.pi.Retained() {
			return fmt.Errorf("journaling a hold: %w", leanError(h.pi.Key()))
		}
	}
	rec := &record{Op: opHold, Holds: make([]holdJSON, 0, len(hs))}
	for _, h := range hs {
		var d *draw
		if h.plan.res != nil {
			d = &draw{res: h.plan.res, amount: h.plan.drawn}
		}
		rec.Holds = append(rec.Holds, l.holdJSON(h.pi, l.nodes[h.plan.node].name, false, h.deadline, d))
	}
	return l.j.append(rec)
}

// logRelease journals a release or confirmation of one pod. For the
// caller's decisions (Unreserve, Confirm) an error means "do not apply";
// the informer's facts (RemovePod) apply whatever it says (see SetJournal).
func (l *Ledger) logRelease(op string, k snapshot.PodKey) error {
	if l.j == nil {
		return nil
	}
	return l.j.append(&record{Op: op, Pods: []keyJSON{toKeyJSON(k)}})
}

// logSettle journals an informer's fact; it applies whatever the journal
// says.
func (l *Ledger) logSettle(k snapshot.PodKey, node string) {
	if l.j != nil {
		_ = l.j.append(&record{Op: opSettle, Pods: []keyJSON{toKeyJSON(k)}, Node: node})
	}
}

// logUnreserve journals releases of several pods by op (opUnreserve
// or opRemove): an error means "do not apply" for Expire, and is ignored
// by Reconcile (a fact).
func (l *Ledger) logUnreserve(op string, keys []snapshot.PodKey) error {
	if l.j == nil {
		return nil
	}
	rec := &record{Op: op, Pods: make([]keyJSON, len(keys))}
	for i, k := range keys {
		rec.Pods[i] = toKeyJSON(k)
	}
	return l.j.append(rec)
}

// logDraw journals a late bind's share (see Ledger.lateDraw); like a
// settle, it gives capacity back rather than taking it.
func (l *Ledger) logDraw(k snapshot.PodKey, r *reservation, amount *snapshot.Vector) {
	if l.j != nil {
		_ = l.j.append(&record{Op: opDraw, Draws: []*drawJSON{{Pod: toKeyJSON(k), Reservation: r.spec.Name, Drawn: vectorJSON(amount)}}})
	}
}

func (l *Ledger) logReservation(spec *Reservation) error {
	if l.j == nil {
		return nil
	}
	return l.j.append(&record{Op: opReservation, Reservation: spec})
}

func (l *Ledger) logRemoveReservation(name string) error {
	if l.j == nil {
		return nil
	}
	return l.j.append(&record{Op: opRemoveReservation, Name: name})
}

// ReplayResult says how much of a journal [Ledger.Replay] applied.
type ReplayResult struct {
	// Records is the number of records applied.
	Records int
	// Bytes is the offset just past the last record applied. Before
	// appending to the same file again, truncate it to Bytes.
	Bytes int64
	// Torn is the number of bytes after Bytes: a record cut short by a
	// crash, possibly followed (or replaced) by NUL bytes, as a filesystem
	// may leave after a crash. 0 if the journal ends cleanly. It is not an
	// error: Replay reports it only when those bytes hold no intact record
	// at any offset and are a prefix of one record followed by nothing but
	// NULs; a tail whose 4-byte length field is written and outside
	// [1, 1 GiB] is not a prefix of any record, so it is corruption however
	// short it is.
	Torn int64
}

// CorruptJournalError is the error [Ledger.Replay] returns for a damaged
// journal; errors.Is(err, ErrCorruptJournal) holds for it, and errors.Is
// and errors.As reach Err.
type CorruptJournalError struct {
	// Record is the index of the damaged record (0-based), Offset the byte
	// where it starts: every record before it is intact.
	Record int
	Offset int64
	// Following is the number of intact records found after the damage,
	// the first at FollowingAt. Truncating the journal to Offset loses
	// them.
	Following   int
	FollowingAt int64
	// Err says what is wrong.
	Err error
}

func (e *CorruptJournalError) Error() string {
	s := fmt.Sprintf("reserve: Ledger.Replay: record %d at offset %d: %v: %v", e.Record, e.Offset, ErrCorruptJournal, e.Err)
	if e.Following > 0 {
		s += fmt.Sprintf(" (%d intact records follow, the first at offset %d)", e.Following, e.FollowingAt)
	}
	return s
}

// Unwrap returns ErrCorruptJournal and Err.
func (e *CorruptJournalError) Unwrap() []error { return []error{ErrCorruptJournal, e.Err} }

// Replay reads a journal written through [Ledger.SetJournal] and rebuilds
// the ledger's own state — holds (with their pods, deadlines and shares),
// confirmations, named reservations and the shares of bound pods — exactly
// as it was after the last intact record. Records are facts, not requests:
// they are applied without fit checks.
//
// The ledger must hold no pods of its own and no reservations
// ([ErrNotEmpty]); it may already have been fed informer events, before or
// after the replay, in any order: a replayed hold of a pod the informer
// reports bound settles into that bound pod, as it would have live. An
// attached journal receives the rebuilt state as a fresh begin record.
// Nodes a record names that the informer has not reported are kept as
// absent until it does. After the informers have synced,
// [Ledger.Reconcile] drops what the cluster no longer has.
//
// The end of the journal may be torn: a record cut short, perhaps followed
// or replaced by NUL bytes, is reported in [ReplayResult.Torn] and
// ignored. Anything else that is not an intact record — a checksum or a
// length that does not match or is outside [1, 1 GiB] (even in a tail
// shorter than a header), garbage, a torn record with intact records
// after it, bad JSON, an impossible transition — fails the whole replay
// with a [*CorruptJournalError] naming the record index and byte offset
// (and counting the intact records after it), and leaves the ledger as it
// was; so does a read error. Replay never drops an intact record silently.
// O(journal size) time and memory.
//
// Recovery from corruption is the caller's choice: keep the file for
// inspection, and either restore a copy, or truncate it to the error's
// Offset (losing the Following records it counts) and replay again.
func (l *Ledger) Replay(r io.Reader) (_ ReplayResult, err error) {
	defer func() {
		if _, corrupt := err.(*CorruptJournalError); !corrupt { // it names Replay itself
			named("Replay", &err)
		}
	}()
	recs, res, err := decodeJournal(r, l.view.DeviceDecoder())
	if err != nil {
		return ReplayResult{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.owned) > 0 || len(l.draws) > 0 || len(l.res) > 0 {
		return ReplayResult{}, fmt.Errorf("%d holds, %d shares, %d reservations: %w", len(l.owned), len(l.draws), len(l.res), ErrNotEmpty)
	}
	for i := range recs {
		if err := l.applyRecord(&recs[i]); err != nil {
			l.resetOwned()
			return ReplayResult{}, &CorruptJournalError{Record: i, Offset: recs[i].offset, Following: len(recs) - i - 1,
				FollowingAt: recs[i].end, Err: fmt.Errorf("%s: %w", recs[i].Op, err)}
		}
	}
	l.settleReplayed()
	if l.j != nil { // keep an attached journal complete
		if err := l.j.append(l.image()); err != nil {
			return res, err
		}
	}
	return res, nil
}

// decoded is a parsed, validated record.
type decoded struct {
	record
	offset, end int64
	holds       []decodedHold
	res         *reservation   // reservation
	image       []*reservation // begin
	draws       []decodedDraw  // begin
	// dec parses the pods of holds (the ledger's DeviceDecoder).
	dec snapshot.DeviceDecoder
}

type decodedHold struct {
	pi        *snapshot.PodInfo
	node      string
	confirmed bool
	deadline  int64
	res       string
	drawn     snapshot.Vector
}

type decodedDraw struct {
	pod   snapshot.PodKey
	res   string
	drawn snapshot.Vector
}

// headerLength returns the length a frame header gives, and whether the
// header is intact (its checksum matches and the length is possible).
func headerLength(h []byte) (int, bool) {
	size := binary.BigEndian.Uint32(h[:4])
	if size == 0 || size > maxRecord {
		return int(size), false
	}
	return int(size), crc32.Checksum(h[:4], castagnoli) == binary.BigEndian.Uint32(h[4:8])
}

// intactFrame reports whether b starts with an intact frame, and its
// length.
func intactFrame(b []byte) (int, bool) {
	if len(b) < frameHeader {
		return 0, false
	}
	size, ok := headerLength(b)
	if !ok || len(b)-frameHeader < size {
		return 0, false
	}
	end := frameHeader + size
	crc := crc32.Update(crc32.Checksum(b[:8], castagnoli), castagnoli, b[frameHeader:end])
	return end, crc == binary.BigEndian.Uint32(b[8:12])
}

// decodeJournal reads and validates every intact record, parsing pods
// with dec.
func decodeJournal(r io.Reader, dec snapshot.DeviceDecoder) ([]decoded, ReplayResult, error) {
	var res ReplayResult
	var out []decoded
	br := bufio.NewReader(r)
	var frame bytes.Buffer
	// rest reads what is left of the journal after the bytes of frame.
	rest := func() ([]byte, error) {
		if _, err := io.Copy(&frame, br); err != nil {
			return nil, fmt.Errorf("read after offset %d: %w", res.Bytes+int64(frame.Len()), err)
		}
		return frame.Bytes(), nil
	}
	for {
		frame.Reset()
		var hdr [frameHeader]byte
		n, err := io.ReadFull(br, hdr[:])
		frame.Write(hdr[:n])
		switch {
		case err == io.EOF:
			return out, res, nil
		case err == io.ErrUnexpectedEOF:
			return out, res, endOfJournal(frame.Bytes(), len(out), &res)
		case err != nil:
			return nil, res, fmt.Errorf("read at offset %d: %w", res.Bytes, err)
		}
		size, ok := headerLength(hdr[:])
		if !ok {
			b, err := rest()
			if err != nil {
				return nil, res, err
			}
			return out, res, endOfJournal(b, len(out), &res)
		}
		if m, err := io.CopyN(&frame, br, int64(size)); err != nil && err != io.EOF {
			return nil, res, fmt.Errorf("read at offset %d: %w", res.Bytes+frameHeader+m, err)
		} else if int(m) < size {
			return out, res, endOfJournal(frame.Bytes(), len(out), &res)
		}
		if _, ok := intactFrame(frame.Bytes()); !ok {
			b, err := rest()
			if err != nil {
				return nil, res, err
			}
			return out, res, endOfJournal(b, len(out), &res)
		}
		d, err := decodeRecord(frame.Bytes()[frameHeader:], len(out) == 0, dec)
		if err != nil {
			cerr := &CorruptJournalError{Record: len(out), Offset: res.Bytes, Err: err}
			b, rerr := rest()
			if rerr != nil {
				return nil, res, rerr
			}
			cerr.Following, cerr.FollowingAt = countIntact(b[frameHeader+size:], res.Bytes+int64(frameHeader+size))
			return nil, res, cerr
		}
		d.offset = res.Bytes
		res.Records++
		res.Bytes += int64(frameHeader + size)
		d.end = res.Bytes
		out = append(out, d)
	}
}

// countIntact counts the intact frames in b, looking for one at every
// offset and skipping over each one found; b starts at offset off.
func countIntact(b []byte, off int64) (n int, first int64) {
	for p := 0; p+frameHeader < len(b); {
		if end, ok := intactFrame(b[p:]); ok {
			if n == 0 {
				first = off + int64(p)
			}
			n++
			p += end
			continue
		}
		p++
	}
	return n, first
}

// endOfJournal decides what rest — the bytes from res.Bytes to the end,
// which do not start with an intact record — is: a torn tail (a prefix of
// one record, perhaps followed by NULs, with no intact record at any
// offset) sets res.Torn; anything else is corruption at res.Bytes.
func endOfJournal(rest []byte, index int, res *ReplayResult) error {
	following, at := countIntact(rest[min(1, len(rest)):], res.Bytes+1)
	written := len(bytes.TrimRight(rest, "\x00")) // NULs are never written: JSON has none
	size, headerOK := 0, false
	if len(rest) >= frameHeader {
		size, headerOK = headerLength(rest)
	}
	// A length field that was written (4 bytes before the NULs) and is
	// impossible was never written by a writer: corruption even when the
	// tail is shorter than a header.
	badLength := written >= 4 && !possibleLength(rest)
	if following == 0 && !badLength && (written < frameHeader || (headerOK && frameHeader+size > written)) {
		res.Torn = int64(len(rest))
		return nil
	}
	var why error
	switch {
	case index == 0 && isVersion1(rest):
		why = errors.New("journal format version 1, which this version does not read (replay it with the version that wrote it, or start a new journal)")
	case badLength:
		why = fmt.Errorf("length %d outside [1, %d]", binary.BigEndian.Uint32(rest[:4]), maxRecord)
	case len(rest) < frameHeader:
		why = fmt.Errorf("%d bytes, shorter than a record header", len(rest))
	case !headerOK && size >= 1 && size <= maxRecord:
		why = errors.New("header checksum mismatch")
	case !headerOK:
		why = fmt.Errorf("length %d outside [1, %d]", size, maxRecord)
	case frameHeader+size > len(rest):
		why = fmt.Errorf("record of %d bytes runs past the end of the journal", frameHeader+size)
	default:
		why = errors.New("checksum mismatch")
	}
	return &CorruptJournalError{Record: index, Offset: res.Bytes, Following: following, FollowingAt: at, Err: why}
}

// possibleLength reports whether b (at least 4 bytes) starts with a
// length a writer could have written: 1 .. 1 GiB.
func possibleLength(b []byte) bool {
	size := binary.BigEndian.Uint32(b[:4])
	return size >= 1 && size <= maxRecord
}

// isVersion1 reports whether b starts with a journal version 1 frame: an
// 8-byte header (length, CRC-32C of the payload).
func isVersion1(b []byte) bool {
	if len(b) < 8 {
		return false
	}
	size := binary.BigEndian.Uint32(b[:4])
	if size == 0 || uint64(len(b)-8) < uint64(size) {
		return false
	}
	return crc32.Checksum(b[8:8+size], castagnoli) == binary.BigEndian.Uint32(b[4:8])
}

func decodeRecord(payload []byte, first bool, dec snapshot.DeviceDecoder) (decoded, error) {
	d := decoded{dec: dec}
	if err := json.Unmarshal(payload, &d.record); err != nil {
		return d, err
	}
	if first && d.Op != opBegin {
		return d, fmt.Errorf("journal starts with %q, not %q", d.Op, opBegin)
	}
	switch d.Op {
	case opBegin:
		if d.Version != journalVersion {
			return d, fmt.Errorf("journal version %d, want %d", d.Version, journalVersion)
		}
		return d, d.decodeImage()
	case opHold:
		if len(d.Holds) == 0 {
			return d, errors.New("hold record without holds")
		}
		if err := d.decodeHolds(); err != nil {
			return d, err
		}
	case opConfirm, opSettle:
		if len(d.Pods) != 1 {
			return d, fmt.Errorf("%s record names %d pods, want 1", d.Op, len(d.Pods))
		}
		if d.Op == opSettle && d.Node == "" {
			return d, errors.New("settle record without node")
		}
	case opUnreserve, opRemove:
		if len(d.Pods) == 0 {
			return d, fmt.Errorf("%s record without pods", d.Op)
		}
	case opDraw:
		if len(d.Draws) != 1 {
			return d, fmt.Errorf("draw record with %d draws, want 1", len(d.Draws))
		}
		if err := d.decodeDraws(); err != nil {
			return d, err
		}
	case opReservation:
		if d.Reservation == nil {
			return d, errors.New("reservation record without reservation")
		}
		res, err := parseReservation(*d.Reservation)
		if err != nil {
			return d, err
		}
		d.res = res
	case opRemoveReservation:
		if d.Name == "" {
			return d, errors.New("removeReservation record without name")
		}
	default:
		return d, fmt.Errorf("unknown op %q", d.Op)
	}
	return d, nil
}

func (d *decoded) decodeHolds() error {
	for i := range d.Holds {
		h, err := decodeHold(&d.Holds[i], d.dec)
		if err != nil {
			return fmt.Errorf("holds[%d]: %w", i, err)
		}
		d.holds = append(d.holds, h)
	}
	return nil
}

// decodeImage validates a begin record's image (also an Import's state).
func (d *decoded) decodeImage() error {
	for i := range d.Reservations {
		res, err := parseReservation(d.Reservations[i])
		if err != nil {
			return fmt.Errorf("reservations[%d]: %w", i, err)
		}
		d.image = append(d.image, res)
	}
	if err := d.decodeHolds(); err != nil {
		return err
	}
	if err := d.decodeDraws(); err != nil {
		return err
	}
	for i, lj := range d.Lapsed {
		if lj.Pod.Name == "" || lj.Reservation == "" {
			return fmt.Errorf("lapsed[%d]: pod or reservation missing: %w", i, ErrInvalid)
		}
	}
	return nil
}

// decodeDraws validates the record's shares of bound pods.
func (d *decoded) decodeDraws() error {
	for i, dj := range d.Draws {
		if dj == nil || dj.Pod.Name == "" || dj.Reservation == "" {
			return fmt.Errorf("draws[%d]: pod or reservation missing: %w", i, ErrInvalid)
		}
		v, err := parseVectorJSON(dj.Drawn)
		if err != nil {
			return fmt.Errorf("draws[%d]: %w: %w", i, ErrInvalid, err)
		}
		d.draws = append(d.draws, decodedDraw{pod: dj.Pod.key(), res: dj.Reservation, drawn: v})
	}
	return nil
}

func decodeHold(h *holdJSON, dec snapshot.DeviceDecoder) (decodedHold, error) {
	pi, err := snapshot.DecodePodInfo(h.Pod, dec)
	if err != nil {
		return decodedHold{}, err
	}
	if h.Node == "" {
		return decodedHold{}, fmt.Errorf("pod %s: node is empty", pi.Key())
	}
	if len(h.Devices) > 0 {
		var devs snapshot.DeviceSet
		for _, i := range h.Devices {
			if i < 0 || i >= snapshot.MaxDevices || devs.Has(i) {
				return decodedHold{}, fmt.Errorf("pod %s: devices %v: want distinct indexes 0..%d", pi.Key(), h.Devices, snapshot.MaxDevices-1)
			}
			devs = devs.With(i)
		}
		if devs.Len() != pi.GPU().Count {
			return decodedHold{}, fmt.Errorf("pod %s: devices %v: the pod asks for %d", pi.Key(), h.Devices, pi.GPU().Count)
		}
		pi = pi.WithDevices(devs)
	}
	dh := decodedHold{pi: pi, node: h.Node, confirmed: h.Confirmed, deadline: noDeadline, res: h.Reservation}
	if h.Deadline != nil {
		if h.Confirmed {
			return dh, fmt.Errorf("pod %s: confirmed with a deadline", pi.Key())
		}
		dh.deadline = deadlineNanos(*h.Deadline)
	}
	if (h.Reservation == "") != (len(h.Drawn) == 0) {
		return dh, fmt.Errorf("pod %s: reservation %q with share %v", pi.Key(), h.Reservation, h.Drawn)
	}
	if dh.drawn, err = parseVectorJSON(h.Drawn); err != nil {
		return dh, fmt.Errorf("pod %s: drawn: %w", pi.Key(), err)
	}
	return dh, nil
}

// applyRecord applies one decoded record to the ledger's own state.
func (l *Ledger) applyRecord(d *decoded) error {
	switch d.Op {
	case opBegin:
		l.resetOwned()
		return l.applyImage(d)
	case opHold:
		for i := range d.holds {
			if err := l.applyHoldFact(&d.holds[i]); err != nil {
				return err
			}
		}
	case opConfirm:
		k := d.Pods[0].key()
		i, ok := l.rec(k)
		if !ok {
			return fmt.Errorf("confirm of pod %s, which is not held", k)
		}
		if l.recs[i].phase == Held {
			l.confirm(i)
		}
	case opSettle:
		k := d.Pods[0].key()
		if i, ok := l.rec(k); ok && l.recs[i].phase != Bound {
			l.dropRec(i)
		}
		delete(l.lapsed, k)
		l.settleDraw(k, d.Node)
	case opUnreserve, opRemove:
		for _, kj := range d.Pods {
			k := kj.key()
			i, ok := l.held.get(nodeview.HashKey(k), k, l.recs)
			if d.Op == opRemove {
				delete(l.lapsed, k)
			} else if ok {
				l.lapse(k) // as Unreserve and Expire do
			}
			l.returnDraw(k)
			if ok {
				l.dropRec(i)
			}
		}
	case opDraw:
		dr := &d.draws[0]
		delete(l.lapsed, dr.pod)
		if err := l.attachFact(dr.pod, dr.res, dr.drawn); err != nil {
			return err
		}
	case opReservation:
		if _, ok := l.res[d.res.spec.Name]; ok {
			return fmt.Errorf("reservation %s: %w", d.res.spec.Name, ErrReservationExists)
		}
		res := *d.res // the decoded record stays reusable
		l.insertReservation(&res, l.nodeSlot(res.spec.Node))
	case opRemoveReservation:
		r, ok := l.res[d.Name]
		if !ok {
			return fmt.Errorf("reservation %s: %w", d.Name, ErrReservationNotFound)
		}
		l.dropReservation(r)
	}
	return nil
}

// applyImage applies a begin record's (or an Import's) reservations, holds
// and shares of bound pods to a ledger without own state.
func (l *Ledger) applyImage(d *decoded) error {
	for i, r := range d.image {
		if _, ok := l.res[r.spec.Name]; ok {
			return fmt.Errorf("reservations[%d]: reservation %s: %w", i, r.spec.Name, ErrReservationExists)
		}
		res := *r // the decoded record stays reusable
		l.insertReservation(&res, l.nodeSlot(res.spec.Node))
	}
	for i := range d.holds {
		if err := l.applyHoldFact(&d.holds[i]); err != nil {
			return fmt.Errorf("holds[%d]: %w", i, err)
		}
	}
	for i, dr := range d.draws {
		if err := l.attachFact(dr.pod, dr.res, dr.drawn); err != nil {
			return fmt.Errorf("draws[%d]: %w", i, err)
		}
	}
	for i, lj := range d.Lapsed {
		r, ok := l.res[lj.Reservation]
		if !ok {
			return fmt.Errorf("lapsed[%d]: pod %s lapsed from reservation %s: %w", i, lj.Pod.key(), lj.Reservation, ErrReservationNotFound)
		}
		l.lapsed[lj.Pod.key()] = r
	}
	return nil
}

// settleReplayed settles, after a replay, what the informer reported while
// the journal was not looking: a replayed hold or confirmation of a pod the
// informer reports bound becomes that bound pod, and shares of bound pods
// follow their pods (see settleDraw). During the replay such a pod has two
// records (the journal's history must apply in order); afterwards, one.
func (l *Ledger) settleReplayed() {
	for _, i := range slices.Clone(l.owned) {
		k := l.recs[i].key
		if bi, ok := l.bound.get(l.recs[i].hash, k, l.recs); ok {
			l.dropRec(i)
			l.settleDraw(k, l.nodes[l.recs[bi].node].name)
		}
	}
	keys := make([]snapshot.PodKey, 0, len(l.draws))
	for k := range l.draws {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmpKey)
	for _, k := range keys {
		if bi, ok := l.bound.get(nodeview.HashKey(k), k, l.recs); ok && l.draws[k] != nil {
			l.settleDraw(k, l.nodes[l.recs[bi].node].name)
		}
	}
	// A lapsed share of a pod the informer reported bound while the
	// journal was not looking: the late bind, as observeBound does it
	// (not journaled here: the image written after a replay has it).
	j := l.j
	l.j = nil
	defer func() { l.j = j }()
	keys = keys[:0]
	for k := range l.lapsed {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, cmpKey)
	for _, k := range keys {
		bi, ok := l.bound.get(nodeview.HashKey(k), k, l.recs)
		if !ok {
			continue
		}
		r := l.lapsed[k]
		delete(l.lapsed, k)
		if rec := &l.recs[bi]; l.draws[k] == nil && r.spec.Node == l.nodes[rec.node].name {
			l.lateDraw(k, r, rec.pi)
		}
	}
}

// applyHoldFact records a journaled hold (or confirmation) without a fit
// check. A pod the informer already reports bound keeps both records until
// settleReplayed.
func (l *Ledger) applyHoldFact(h *decodedHold) error {
	k := h.pi.Key()
	if l.draws[k] != nil {
		return fmt.Errorf("pod %s already draws on a reservation", k)
	}
	if i, ok := l.held.get(nodeview.HashKey(k), k, l.recs); ok {
		return fmt.Errorf("pod %s is already %s", k, l.recs[i].phase)
	}
	if h.res != "" {
		if err := l.attachFact(k, h.res, h.drawn); err != nil {
			return err
		}
	}
	ni := l.nodeSlot(h.node)
	idx := l.newRec(podRec{key: k, hash: nodeview.KeyHash(h.pi), pi: h.pi, node: ni, phase: Held, deadline: h.deadline})
	l.ver++
	if h.confirmed {
		l.confirm(idx)
	}
	return nil
}

func (l *Ledger) attachFact(k snapshot.PodKey, name string, amount snapshot.Vector) error {
	r, ok := l.res[name]
	if !ok {
		return fmt.Errorf("pod %s draws on reservation %s: %w", k, name, ErrReservationNotFound)
	}
	if l.draws[k] != nil {
		return fmt.Errorf("pod %s already draws on a reservation", k)
	}
	if r.spec.AllocateOnce && len(r.pods) > 0 {
		return fmt.Errorf("pod %s draws on allocate-once reservation %s, already drawn by %s", k, name, r.pods[0])
	}
	left := r.cap.Clone()
	left.Sub(&r.alloc)
	for i := range amount.Len() {
		id := snapshot.ResourceID(i)
		if amount.Get(id) > left.Get(id) {
			return fmt.Errorf("pod %s draws %d of %s from reservation %s, which has %d left", k, amount.Get(id), id, name, left.Get(id))
		}
	}
	l.attachDraw(k, r, amount)
	return nil
}

// resetOwned drops the ledger's own state (holds, confirmations, shares,
// reservations), restoring the aggregates to the informer's view.
func (l *Ledger) resetOwned() {
	for len(l.owned) > 0 {
		i := l.owned[len(l.owned)-1]
		l.returnDraw(l.recs[i].key)
		l.dropRec(i)
	}
	for k := range l.draws {
		l.returnDraw(k)
	}
	clear(l.lapsed)
	for _, name := range sortedKeys(l.res) {
		l.dropReservation(l.res[name])
	}
}
