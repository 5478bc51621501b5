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

	"github.com/schedkit/schedkit/snapshot"
)

// Journal format
//
// A journal is a sequence of records. Each record is a frame:
//
//	length  uint32, big-endian: payload bytes, 1 .. 64 MiB
//	crc     uint32, big-endian: CRC-32C (Castagnoli) of the payload
//	payload one JSON object with an "op" field
//
// The first record is {"op":"begin","version":1}, followed by the ledger's
// state at the time the journal was attached (one record per reservation,
// hold and share), then one record per change of the ledger's own state.
// A begin record later in the stream resets that state (a journal may be
// compacted by attaching a fresh one with [Ledger.SetJournal]).
//
// Only state that would die with the process is journaled: holds,
// confirmations, named reservations and their shares, and the moments the
// informer's reports settled them ("settle") or deletes freed them. Nodes
// and bound pods are the API server's; after a restart the informer lists
// them again.

const (
	journalVersion = 1
	maxRecord      = 64 << 20
	frameHeader    = 8
)

const (
	opBegin             = "begin"
	opHold              = "hold"    // holds (one, or a whole gang)
	opConfirm           = "confirm" // pods[0] held -> confirmed
	opSettle            = "settle"  // informer reported pods[0] bound on node
	opUnreserve         = "unreserve"
	opReservation       = "reservation"
	opRemoveReservation = "removeReservation"
	opDraw              = "draw" // a bound pod's share of a reservation
)

// Late binds (see Ledger.lapsed): opUnreserve releases holds and lets
// their shares lapse; opRemove releases what deleted pods held or drew
// and forgets their lapsed shares; opLapse records pods[0]'s lapsed share
// of reservation name (in an image).
const (
	opRemove = "remove"
	opLapse  = "lapse"
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
}

type drawJSON struct {
	Pod         keyJSON          `json:"pod"`
	Reservation string           `json:"reservation"`
	Drawn       map[string]int64 `json:"drawn"`
}

type record struct {
	Op          string       `json:"op"`
	Version     int          `json:"version,omitempty"`
	Holds       []holdJSON   `json:"holds,omitempty"`
	Pods        []keyJSON    `json:"pods,omitempty"`
	Node        string       `json:"node,omitempty"`
	Reservation *Reservation `json:"reservation,omitempty"`
	Name        string       `json:"name,omitempty"`
	Draw        *drawJSON    `json:"draw,omitempty"`
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
	err error // sticky
}

func (j *journal) write(rec *record) error {
	if j.err != nil {
		return j.err
	}
	payload, err := json.Marshal(rec)
	if err != nil {
		j.err = fmt.Errorf("%w: encode %s record: %w", ErrJournal, rec.Op, err)
		return j.err
	}
	j.buf = binary.BigEndian.AppendUint32(j.buf[:0], uint32(len(payload)))
	j.buf = binary.BigEndian.AppendUint32(j.buf, crc32.Checksum(payload, castagnoli))
	j.buf = append(j.buf, payload...)
	n, err := j.w.Write(j.buf)
	if err == nil && n != len(j.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		j.err = fmt.Errorf("%w: %s record: %w", ErrJournal, rec.Op, err)
		return j.err
	}
	return nil
}

// SetJournal attaches w as the ledger's journal, or detaches the journal
// when w is nil. It first writes a begin record and the ledger's current
// state (reservations, holds, confirmations, shares), so the new journal
// alone rebuilds the ledger's own state: attaching a fresh writer compacts.
// From then on every change is written before it is visible.
//
// Each record is one Write call. When a Write fails the journal breaks:
// changes that take capacity (Reserve, ReserveGang, AddReservation) fail
// with [ErrJournal] and change nothing; changes that release or settle
// capacity still apply (refusing them would hold capacity the cluster has
// freed) and the error is kept for [Ledger.JournalErr]. Attach a new writer
// to recover. The ledger never calls Sync or Close: durability of w is the
// caller's. Errors: [ErrJournal].
func (l *Ledger) SetJournal(w io.Writer) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if w == nil {
		l.j = nil
		return nil
	}
	j := &journal{w: w}
	l.j = j
	for _, rec := range l.image() {
		if err := j.write(rec); err != nil {
			return err
		}
	}
	return nil
}

// JournalErr returns the error that broke the journal, or nil.
func (l *Ledger) JournalErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.j == nil {
		return nil
	}
	return l.j.err
}

// image returns the records that rebuild the ledger's own state.
func (l *Ledger) image() []*record {
	recs := []*record{{Op: opBegin, Version: journalVersion}}
	for _, name := range sortedKeys(l.res) {
		spec := l.res[name].spec
		recs = append(recs, &record{Op: opReservation, Reservation: &spec})
	}
	if holds := l.holdsJSON(); len(holds) > 0 {
		recs = append(recs, &record{Op: opHold, Holds: holds})
	}
	for _, d := range l.boundDrawsJSON() {
		recs = append(recs, &record{Op: opDraw, Draw: d})
	}
	for _, lj := range l.lapsedJSON() {
		recs = append(recs, &record{Op: opLapse, Pods: []keyJSON{lj.Pod}, Name: lj.Reservation})
	}
	return recs
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
	rec := &record{Op: opHold, Holds: make([]holdJSON, 0, len(hs))}
	for _, h := range hs {
		var d *draw
		if h.plan.res != nil {
			d = &draw{res: h.plan.res, amount: h.plan.drawn}
		}
		rec.Holds = append(rec.Holds, l.holdJSON(h.pi, l.nodes[h.plan.node].name, false, h.deadline, d))
	}
	return l.j.write(rec)
}

// logRelease journals a change that releases or settles capacity; it
// applies whatever the journal says (see SetJournal).
func (l *Ledger) logRelease(op string, k snapshot.PodKey) {
	if l.j != nil {
		_ = l.j.write(&record{Op: op, Pods: []keyJSON{toKeyJSON(k)}})
	}
}

func (l *Ledger) logSettle(k snapshot.PodKey, node string) {
	if l.j != nil {
		_ = l.j.write(&record{Op: opSettle, Pods: []keyJSON{toKeyJSON(k)}, Node: node})
	}
}

// logUnreserve journals keys released by op (opUnreserve or opRemove).
func (l *Ledger) logUnreserve(op string, keys []snapshot.PodKey) {
	if l.j == nil {
		return
	}
	rec := &record{Op: op, Pods: make([]keyJSON, len(keys))}
	for i, k := range keys {
		rec.Pods[i] = toKeyJSON(k)
	}
	_ = l.j.write(rec)
}

// logDraw journals a late bind's share (see Ledger.lateDraw); like a
// settle, it gives capacity back rather than taking it.
func (l *Ledger) logDraw(k snapshot.PodKey, r *reservation, amount *snapshot.Vector) {
	if l.j != nil {
		_ = l.j.write(&record{Op: opDraw, Draw: &drawJSON{Pod: toKeyJSON(k), Reservation: r.spec.Name, Drawn: vectorJSON(amount)}})
	}
}

func (l *Ledger) logReservation(spec *Reservation) error {
	if l.j == nil {
		return nil
	}
	return l.j.write(&record{Op: opReservation, Reservation: spec})
}

func (l *Ledger) logRemoveReservation(name string) {
	if l.j != nil {
		_ = l.j.write(&record{Op: opRemoveReservation, Name: name})
	}
}

// ReplayResult says how much of a journal [Ledger.Replay] applied.
type ReplayResult struct {
	// Records is the number of complete records applied.
	Records int
	// Bytes is the offset just past the last complete record. Before
	// appending to the same file again, truncate it to Bytes.
	Bytes int64
	// Torn is the length of an incomplete final record (a write cut short
	// by a crash), 0 if the journal ends cleanly. It is not an error.
	Torn int64
}

// Replay reads a journal written through [Ledger.SetJournal] and rebuilds
// the ledger's own state — holds (with their pods, deadlines and shares),
// confirmations, named reservations and the shares of bound pods — exactly
// as it was after the last complete record. Records are facts, not
// requests: they are applied without fit checks.
//
// The ledger must hold no pods of its own and no reservations
// ([ErrNotEmpty]); it may already have been fed informer events, before or
// after the replay, in any order: a replayed hold of a pod the informer
// reports bound settles into that bound pod, as it would have live. An
// attached journal receives the rebuilt state as a fresh image. Nodes a
// record names that the informer has not reported are kept as absent until
// it does. After the informers have synced, [Ledger.Reconcile] drops what
// the cluster no longer has.
//
// A final record cut short is reported in [ReplayResult.Torn] and ignored;
// every complete record before it is applied. A complete record that is
// malformed (checksum, JSON, an impossible transition) fails the whole
// replay with [ErrCorruptJournal], naming its offset, and leaves the ledger
// as it was; so does a read error. O(journal size).
func (l *Ledger) Replay(r io.Reader) (ReplayResult, error) {
	var res ReplayResult
	recs, res, err := decodeJournal(r)
	if err != nil {
		return res, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.owned) > 0 || len(l.draws) > 0 || len(l.res) > 0 {
		return ReplayResult{}, fmt.Errorf("Replay: %d holds, %d shares, %d reservations: %w", len(l.owned), len(l.draws), len(l.res), ErrNotEmpty)
	}
	for i := range recs {
		if err := l.applyRecord(&recs[i]); err != nil {
			l.resetOwned()
			return ReplayResult{}, fmt.Errorf("Replay: record %d at offset %d (%s): %w: %w", i, recs[i].offset, recs[i].Op, ErrCorruptJournal, err)
		}
	}
	l.settleReplayed()
	if l.j != nil { // keep an attached journal complete
		for _, rec := range l.image() {
			if err := l.j.write(rec); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// decoded is a parsed, validated record.
type decoded struct {
	record
	offset int64
	holds  []decodedHold
	res    *reservation
	drawn  snapshot.Vector
}

type decodedHold struct {
	pi        *snapshot.PodInfo
	node      string
	confirmed bool
	deadline  int64
	res       string
	drawn     snapshot.Vector
}

// decodeJournal reads and validates every complete record.
func decodeJournal(r io.Reader) ([]decoded, ReplayResult, error) {
	var res ReplayResult
	var out []decoded
	br := bufio.NewReader(r)
	var payload bytes.Buffer
	for {
		var hdr [frameHeader]byte
		n, err := io.ReadFull(br, hdr[:])
		if err == io.EOF {
			return out, res, nil
		}
		if err == io.ErrUnexpectedEOF {
			res.Torn = int64(n)
			return out, res, nil
		}
		if err != nil {
			return nil, ReplayResult{}, fmt.Errorf("Replay: read at offset %d: %w", res.Bytes, err)
		}
		size := binary.BigEndian.Uint32(hdr[:4])
		if size == 0 || size > maxRecord {
			return nil, ReplayResult{}, fmt.Errorf("Replay: record %d at offset %d: length %d outside [1, %d]: %w", len(out), res.Bytes, size, maxRecord, ErrCorruptJournal)
		}
		payload.Reset()
		m, err := io.CopyN(&payload, br, int64(size))
		if err == io.EOF {
			res.Torn = frameHeader + m
			return out, res, nil
		}
		if err != nil {
			return nil, ReplayResult{}, fmt.Errorf("Replay: read at offset %d: %w", res.Bytes+frameHeader+m, err)
		}
		if crc32.Checksum(payload.Bytes(), castagnoli) != binary.BigEndian.Uint32(hdr[4:]) {
			return nil, ReplayResult{}, fmt.Errorf("Replay: record %d at offset %d: checksum mismatch: %w", len(out), res.Bytes, ErrCorruptJournal)
		}
		d, err := decodeRecord(payload.Bytes(), len(out) == 0)
		if err != nil {
			return nil, ReplayResult{}, fmt.Errorf("Replay: record %d at offset %d: %w: %w", len(out), res.Bytes, ErrCorruptJournal, err)
		}
		d.offset = res.Bytes
		out = append(out, d)
		res.Records++
		res.Bytes += frameHeader + int64(size)
	}
}

func decodeRecord(payload []byte, first bool) (decoded, error) {
	var d decoded
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
	case opHold:
		if len(d.Holds) == 0 {
			return d, errors.New("hold record without holds")
		}
		for i := range d.Holds {
			h, err := decodeHold(&d.Holds[i])
			if err != nil {
				return d, fmt.Errorf("holds[%d]: %w", i, err)
			}
			d.holds = append(d.holds, h)
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
	case opLapse:
		if len(d.Pods) != 1 || d.Name == "" {
			return d, errors.New("lapse record without one pod and a reservation")
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
	case opDraw:
		if d.Draw == nil || d.Draw.Reservation == "" || d.Draw.Pod.Name == "" {
			return d, errors.New("draw record without pod or reservation")
		}
		v, err := parseVectorJSON(d.Draw.Drawn)
		if err != nil {
			return d, fmt.Errorf("draw.drawn: %w", err)
		}
		d.drawn = v
	default:
		return d, fmt.Errorf("unknown op %q", d.Op)
	}
	return d, nil
}

func decodeHold(h *holdJSON) (decodedHold, error) {
	pi, err := snapshot.NewPodInfo(h.Pod)
	if err != nil {
		return decodedHold{}, err
	}
	if h.Node == "" {
		return decodedHold{}, fmt.Errorf("pod %s: node is empty", pi.Key())
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
			i, ok := l.held.get(k.Hash(), k, l.recs)
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
	case opLapse:
		r, ok := l.res[d.Name]
		if !ok {
			return fmt.Errorf("pod %s lapsed from reservation %s: %w", d.Pods[0].key(), d.Name, ErrReservationNotFound)
		}
		l.lapsed[d.Pods[0].key()] = r
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
	case opDraw:
		if err := l.attachFact(d.Draw.Pod.key(), d.Draw.Reservation, d.drawn); err != nil {
			return err
		}
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
		if bi, ok := l.bound.get(k.Hash(), k, l.recs); ok && l.draws[k] != nil {
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
		bi, ok := l.bound.get(k.Hash(), k, l.recs)
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
	if i, ok := l.held.get(k.Hash(), k, l.recs); ok {
		return fmt.Errorf("pod %s is already %s", k, l.recs[i].phase)
	}
	if h.res != "" {
		if err := l.attachFact(k, h.res, h.drawn); err != nil {
			return err
		}
	}
	ni := l.nodeSlot(h.node)
	idx := l.newRec(podRec{key: k, hash: h.pi.KeyHash(), pi: h.pi, node: ni, phase: Held, deadline: h.deadline})
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
