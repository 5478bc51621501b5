package reserve_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// firstIntactFrame returns the first offset at or after from where b holds
// an intact record of journal format version 2, or -1: the test's own
// reading of the format (see frame).
func firstIntactFrame(b []byte, from int) int {
	for p := from; p+12 < len(b); p++ {
		size := int(binary.BigEndian.Uint32(b[p:]))
		if size == 0 || p+12+size > len(b) {
			continue
		}
		if bytes.Equal(frame(string(b[p+12:p+12+size])), b[p:p+12+size]) {
			return p
		}
	}
	return -1
}

// crashWorld drives a ledger through random operations of every kind that
// writes a journal record — the caller's decisions (Reserve, ReserveUntil,
// ReserveGang, Unreserve, Confirm, Expire, AddReservation,
// RemoveReservation) and the informer's facts (a pod reported bound, a pod
// deleted) — and keeps the cluster's side of the story: which pods exist.
type crashWorld struct {
	t       testing.TB
	rng     *rand.Rand
	l       *reserve.Ledger
	pods    []*v1.Pod
	deleted map[snapshot.PodKey]bool
	now     time.Time
	resN    int
	uids    int // pods reported as created again (a new metadata.uid)
}

var crashT0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newCrashWorld(t testing.TB, seed uint64) *crashWorld {
	w := &crashWorld{t: t, rng: rand.New(rand.NewPCG(seed, 7)), l: reserve.New(), deleted: map[snapshot.PodKey]bool{}, now: crashT0}
	for i := range 4 {
		require.NoError(t, w.l.AddNode(st.MakeNode(fmt.Sprintf("n%d", i)).Capacity("cpu", "16", "pods", "110").Obj()))
	}
	for i := range 80 {
		p := st.MakePod(fmt.Sprintf("p%02d", i)).Req("cpu", []string{"500m", "1", "2"}[i%3])
		if i%4 == 0 {
			p.Label("app", "web")
		}
		w.pods = append(w.pods, p.Obj())
	}
	return w
}

func (w *crashWorld) pod() *v1.Pod {
	for {
		p := w.pods[w.rng.IntN(len(w.pods))]
		if !w.deleted[snapshot.KeyOf(p)] {
			return p
		}
	}
}

func (w *crashWorld) node() string { return fmt.Sprintf("n%d", w.rng.IntN(4)) }

// step runs one random operation. Results are not checked here (with a
// broken journal the caller's decisions are refused); the tests compare
// states.
func (w *crashWorld) step() {
	l := w.l
	switch x := w.rng.IntN(100); {
	case x < 30:
		var dl time.Time
		if w.rng.IntN(2) == 0 {
			dl = w.now.Add(time.Duration(1+w.rng.IntN(5)) * time.Second)
		}
		_, _ = l.ReserveUntil(snapshot.MustPodInfo(w.pod()), w.node(), dl)
	case x < 38:
		members := []reserve.GangMember{}
		seen := map[snapshot.PodKey]bool{}
		for range 2 + w.rng.IntN(2) {
			p := w.pod()
			if !seen[snapshot.KeyOf(p)] {
				seen[snapshot.KeyOf(p)] = true
				members = append(members, reserve.GangMember{Pod: snapshot.MustPodInfo(p), Node: w.node()})
			}
		}
		_, _ = l.ReserveGang(members, time.Time{})
	case x < 48:
		l.Unreserve(snapshot.KeyOf(w.pod()))
	case x < 58:
		_ = l.Confirm(snapshot.KeyOf(w.pod()))
	case x < 70: // the informer reports a pod bound, usually where it is held
		p := w.pod()
		node := w.node()
		for _, h := range l.Holds() {
			if h.Pod.Key() == snapshot.KeyOf(p) && w.rng.IntN(4) != 0 {
				node = h.Node
			}
		}
		q := p.DeepCopy()
		q.Spec.NodeName = node
		if w.rng.IntN(2) == 0 { // a pod created again under the name: it may move
			w.uids++
			q.UID = types.UID(fmt.Sprintf("%s-again-%d", q.UID, w.uids))
		}
		if err := l.AddPod(q); err != nil {
			// The same pod (uid) reported on another node than it is
			// bound to: refused, nothing changes.
			require.ErrorIs(w.t, err, reserve.ErrInvalid)
			require.ErrorContains(w.t, err, "spec.nodeName cannot change")
		}
	case x < 76: // deleted for good
		p := w.pod()
		w.deleted[snapshot.KeyOf(p)] = true
		l.RemovePod(snapshot.KeyOf(p))
	case x < 82:
		w.now = w.now.Add(time.Duration(w.rng.IntN(3)) * time.Second)
		l.Expire(w.now)
	case x < 92:
		w.resN++
		_, _ = l.AddReservation(reserve.Reservation{
			Name: fmt.Sprintf("r%d", w.resN%5), Node: w.node(), Capacity: st.List("cpu", "2"), AllocateOnce: w.rng.IntN(2) == 0,
			Owner: reserve.Owner{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		})
	default:
		_ = l.RemoveReservation(fmt.Sprintf("r%d", w.rng.IntN(5)))
	}
}

// recordedJournal is a journal and the ledger's own state at each record
// boundary.
type recordedJournal struct {
	data   []byte
	starts []int          // offsets where records start, ascending
	states map[int]string // ownState at each record boundary
	final  *reserve.Ledger
}

// bigJournal runs random operations until the journal has at least
// records records (one per operation at most).
func bigJournal(t testing.TB, seed uint64, records int) *recordedJournal {
	w := newCrashWorld(t, seed)
	var buf bytes.Buffer
	require.NoError(t, w.l.SetJournal(&buf))
	rj := &recordedJournal{starts: []int{0}, states: map[int]string{buf.Len(): ownState(w.l)}}
	for len(rj.starts) < records {
		before := buf.Len()
		w.step()
		if buf.Len() != before {
			rj.starts = append(rj.starts, before)
			rj.states[buf.Len()] = ownState(w.l)
		}
	}
	require.NoError(t, w.l.JournalErr())
	rj.data, rj.final = buf.Bytes(), w.l
	return rj
}

// recordAt returns the start of the record holding byte off.
func (rj *recordedJournal) recordAt(off int) (index, start int) {
	i, found := slices.BinarySearch(rj.starts, off)
	if !found {
		i--
	}
	return i, rj.starts[i]
}

// lastBoundary returns the end of the last complete record within
// data[:cut].
func (rj *recordedJournal) lastBoundary(cut int) int {
	last := 0
	for off := range rj.states {
		if off <= cut && off > last {
			last = off
		}
	}
	return last
}

// TestJournalTornAtEveryOffsetLarge cuts a 200-record journal of every
// record kind at every byte offset, and also fills the cut-off rest with
// NUL bytes (a file whose size reached the disk before its data did):
// replay applies every complete record, reports the rest as torn, and the
// ledger's own state is exactly the live ledger's after the last complete
// record. By default it cuts at every 37th byte (a prime, so the cuts fall
// at every offset within a record over the journal);
// SCHEDKIT_EXHAUSTIVE=1 cuts at every byte (minutes).
func TestJournalTornAtEveryOffsetLarge(t *testing.T) {
	rj := bigJournal(t, 1, 200)
	n := len(rj.data)
	step := 37
	if os.Getenv("SCHEDKIT_EXHAUSTIVE") != "" {
		step = 1
	}
	cuts, nulFilled := 0, 0
	for cut := 0; cut <= n; cut += step {
		last := rj.lastBoundary(cut)
		for _, nul := range []bool{false, true} {
			data := rj.data[:cut]
			if nul {
				if cut == n {
					continue
				}
				data = append(bytes.Clone(data), make([]byte, n-cut)...)
				nulFilled++
			} else {
				cuts++
			}
			l := reserve.New()
			res, err := l.Replay(bytes.NewReader(data))
			require.NoError(t, err, "cut at %d (NUL-filled: %v)", cut, nul)
			require.Equal(t, int64(last), res.Bytes, "cut at %d (NUL-filled: %v): Bytes", cut, nul)
			require.Equal(t, int64(len(data)-last), res.Torn, "cut at %d (NUL-filled: %v): Torn", cut, nul)
			require.Equal(t, rj.states[last], ownState(l), "cut at %d (NUL-filled: %v): state", cut, nul)
		}
	}
	t.Logf("journal: %d bytes, %d records; %d cuts and %d NUL-filled cuts replayed to the state after the last complete record", n, len(rj.starts), cuts, nulFilled)
}

// TestJournalNULTail: NUL bytes after the last record (of any length; a
// filesystem may leave whole zeroed blocks after a crash) are a torn tail,
// not corruption.
func TestJournalNULTail(t *testing.T) {
	rj := bigJournal(t, 2, 40)
	final := rj.states[len(rj.data)]
	for _, k := range []int{1, 4, 7, 8, 11, 12, 13, 64, 512, 4096, 65536} {
		data := append(bytes.Clone(rj.data), make([]byte, k)...)
		l := reserve.New()
		res, err := l.Replay(bytes.NewReader(data))
		require.NoError(t, err, "%d NUL bytes", k)
		assert.Equal(t, int64(len(rj.data)), res.Bytes, "%d NUL bytes: Bytes", k)
		assert.Equal(t, int64(k), res.Torn, "%d NUL bytes: Torn", k)
		assert.Equal(t, final, ownState(l), "%d NUL bytes: state", k)
	}
	// An empty journal that is all NULs holds nothing.
	res, err := reserve.New().Replay(bytes.NewReader(make([]byte, 4096)))
	require.NoError(t, err)
	assert.Equal(t, reserve.ReplayResult{Torn: 4096}, res)
}

// TestJournalEveryBitFlip flips bits of a 250-record journal, one at a
// time: each replay either reports corruption naming the index and offset
// of the damaged record (and changes nothing), or gives exactly the live
// state. A replay that succeeds with any other state is a silent loss;
// there must be none. By default it flips every bit of every record header
// (where a flipped length used to pass for a torn tail) and of every 41st
// payload byte; SCHEDKIT_EXHAUSTIVE=1 flips every bit of the journal
// (tens of minutes under -race).
func TestJournalEveryBitFlip(t *testing.T) {
	rj := bigJournal(t, 3, 250)
	final := rj.states[len(rj.data)]
	payloadStride := 41
	if os.Getenv("SCHEDKIT_EXHAUSTIVE") != "" {
		payloadStride = 1
	}
	var mu sync.Mutex
	var flips, reported, exact, silent int
	const workers = 2
	t.Run("flips", func(t *testing.T) {
		for wk := range workers {
			t.Run(fmt.Sprint(wk), func(t *testing.T) {
				t.Parallel()
				var f, r, e, s int
				for off := wk; off < len(rj.data); off += workers {
					idx, start := rj.recordAt(off)
					if off-start >= 12 && (off-start)%payloadStride != 0 {
						continue
					}
					for bit := range 8 {
						f++
						data := bytes.Clone(rj.data)
						data[off] ^= 1 << bit
						l := reserve.New()
						res, err := l.Replay(bytes.NewReader(data))
						if err != nil {
							require.ErrorIs(t, err, reserve.ErrCorruptJournal, "flip at %d.%d", off, bit)
							require.Empty(t, ownState(l), "flip at %d.%d: a failed replay changed the ledger", off, bit)
							require.Contains(t, err.Error(), fmt.Sprintf("record %d at offset %d:", idx, start), "flip at %d.%d", off, bit)
							r++
							continue
						}
						if ownState(l) == final && res.Bytes == int64(len(rj.data)) {
							e++
							continue
						}
						s++
						t.Errorf("flip at %d.%d (record %d at %d): silent loss: replayed %d records, %d bytes, torn %d", off, bit, idx, start, res.Records, res.Bytes, res.Torn)
					}
				}
				mu.Lock()
				flips, reported, exact, silent = flips+f, reported+r, exact+e, silent+s
				mu.Unlock()
			})
		}
	})
	t.Logf("journal: %d bytes, %d records; %d single-bit flips (payload stride %d): %d reported as corruption at the damaged record, %d replayed to the exact state, %d silent losses",
		len(rj.data), len(rj.starts), flips, payloadStride, reported, exact, silent)
	require.Zero(t, silent)
}

// crashWriter stores what it is given until Write call number failAt
// (0-based); that call stores keep(len(p)) bytes and fails, and so does
// every later call (a disk that filled up, or a write-then-fsync writer
// whose fsync failed after the bytes were stored).
type crashWriter struct {
	bytes.Buffer
	calls  int
	failAt int
	keep   func(n int) int
}

func (w *crashWriter) Write(p []byte) (int, error) {
	w.calls++
	switch {
	case w.calls-1 < w.failAt:
		return w.Buffer.Write(p)
	case w.calls-1 == w.failAt:
		k := w.keep(len(p))
		w.Buffer.Write(p[:k])
		return k, errDisk
	}
	return 0, errDisk
}

var crashModes = []struct {
	name string
	keep func(int) int
}{
	{"nothing stored", func(int) int { return 0 }},
	{"half stored", func(n int) int { return n / 2 }},
	{"all stored, then error", func(n int) int { return n }},
}

// restart is what the documented recovery gives from the bytes written:
// the informer's list (the live ledger's nodes and bound pods), Replay of
// the journal, and Reconcile with the pods the cluster still has.
func (w *crashWorld) restart(t *testing.T, journal []byte) *reserve.Ledger {
	r := reserve.New()
	feedInformer(t, r, export(t, w.l))
	_, err := r.Replay(bytes.NewReader(journal))
	require.NoError(t, err)
	r.Reconcile(func(k snapshot.PodKey) bool { return !w.deleted[k] })
	return r
}

// TestJournalWriteFailureEveryRecord makes the journal's writer fail at
// every record position of a random run, three ways (nothing stored, half
// the record stored, all of it stored and then an error), and keeps going
// with the same operations: after every later step, the ledger equals what
// a restart from the bytes written gives (informer list, Replay,
// Reconcile) — memory and disk never disagree.
func TestJournalWriteFailureEveryRecord(t *testing.T) {
	const steps = 120
	// How many records does the run write when nothing fails?
	probe := newCrashWorld(t, 11)
	var all crashWriter
	all.failAt = 1 << 30
	require.NoError(t, probe.l.SetJournal(&all))
	for range steps {
		probe.step()
	}
	records := all.calls
	stride := 1
	if testing.Short() || raceEnabled {
		stride = 5
	}
	checked := 0
	for _, mode := range crashModes {
		for failAt := 0; failAt < records; failAt += stride {
			w := newCrashWorld(t, 11)
			cw := &crashWriter{failAt: failAt, keep: mode.keep}
			_ = w.l.SetJournal(cw)
			for i := range steps {
				w.step()
				if cw.calls > failAt || i == steps-1 {
					want := export(t, w.l)
					got := export(t, w.restart(t, cw.Bytes()))
					require.Equal(t, want, got, "%s at record %d, step %d: the ledger and a restart from its journal disagree", mode.name, failAt, i)
					checked++
				}
			}
			require.ErrorIs(t, w.l.JournalErr(), reserve.ErrJournal, "%s at record %d", mode.name, failAt)
		}
	}
	t.Logf("%d records; %d failure positions x %d modes; %d states compared", records, (records+stride-1)/stride, len(crashModes), checked)
}

// TestJournalBrokenRefusesDecisions: after a write error, every decision
// of the caller is refused and changes nothing (the journal could not say
// so), while the informer's facts still apply; a new writer recovers.
func TestJournalBrokenRefusesDecisions(t *testing.T) {
	l := newLedger(t, node("n1", "8"))
	a, b, c := pod("a", "1"), pod("b", "1"), pod("c", "1")
	cw := &crashWriter{failAt: 1 << 30, keep: func(int) int { return 0 }}
	require.NoError(t, l.SetJournal(cw))
	mustReserve(t, l, a.Pod(), "n1", crashT0)
	mustReserve(t, l, b.Pod(), "n1", time.Time{})
	_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Controller: "x"}})
	require.NoError(t, err)
	cw.failAt = cw.calls // the next write fails
	_, err = l.Reserve(c, "n1")
	require.ErrorIs(t, err, reserve.ErrJournal)
	require.ErrorIs(t, err, errDisk)
	before := export(t, l)

	assert.False(t, l.Unreserve(b.Key()), "Unreserve with a broken journal")
	require.ErrorIs(t, l.Confirm(b.Key()), reserve.ErrJournal)
	assert.Nil(t, l.Expire(crashT0.Add(time.Hour)), "Expire with a broken journal")
	require.ErrorIs(t, l.RemoveReservation("r"), reserve.ErrJournal)
	_, err = l.AddReservation(reserve.Reservation{Name: "r2", Node: "n1", Capacity: st.List("cpu", "1"), Owner: reserve.Owner{Controller: "x"}})
	require.ErrorIs(t, err, reserve.ErrJournal)
	_, err = l.ReserveGang([]reserve.GangMember{{Pod: c, Node: "n1"}}, time.Time{})
	require.ErrorIs(t, err, reserve.ErrJournal)
	assert.Equal(t, before, export(t, l), "a refused decision changed the ledger")

	// Facts still apply: a is reported bound, b is deleted.
	bound := a.Pod().DeepCopy()
	bound.Spec.NodeName = "n1"
	require.NoError(t, l.AddPod(bound))
	assert.True(t, l.RemovePod(b.Key()))
	assert.Empty(t, l.Holds())

	// A new writer gets the whole state and decisions work again.
	var fresh bytes.Buffer
	require.NoError(t, l.SetJournal(&fresh))
	require.NoError(t, l.JournalErr())
	require.NoError(t, l.RemoveReservation("r"))
	mustReserve(t, l, c.Pod(), "n1", time.Time{})
	checkRebuild(t, l, fresh.Bytes())
}

// TestJournalStoredThenError: a writer that stores the record and then
// reports an error (write, then a failed fsync) — the record is in the
// journal, so the change is applied and reported as done; the error breaks
// the journal for what follows.
func TestJournalStoredThenError(t *testing.T) {
	l := newLedger(t, node("n1", "8"))
	a, b := pod("a", "1"), pod("b", "1")
	cw := &crashWriter{failAt: 1, keep: func(n int) int { return n }}
	require.NoError(t, l.SetJournal(cw))
	reasons, err := l.Reserve(a, "n1")
	require.NoError(t, err, "the record was stored whole: the hold is in the journal")
	require.Nil(t, reasons)
	require.Len(t, l.Holds(), 1)
	require.ErrorIs(t, l.JournalErr(), reserve.ErrJournal)
	_, err = l.Reserve(b, "n1")
	require.ErrorIs(t, err, reserve.ErrJournal)

	r := reserve.New()
	require.NoError(t, r.AddNode(node("n1", "8")))
	_, err = r.Replay(bytes.NewReader(cw.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, ownState(l), ownState(r))
}

// TestSetJournalFailure: an image that cannot be written whole leaves
// nothing a replay would apply — a partial image would rebuild part of the
// state — and the ledger refuses decisions until a writer takes the image.
func TestSetJournalFailure(t *testing.T) {
	for _, mode := range crashModes[:2] {
		for failAt := range 4 {
			w := newCrashWorld(t, 5)
			var ok bytes.Buffer
			require.NoError(t, w.l.SetJournal(&ok))
			for len(w.l.Holds()) < 5 || len(w.l.Reservations()) < 2 {
				w.step()
			}
			before := export(t, w.l)
			cw := &crashWriter{failAt: failAt, keep: mode.keep}
			if w.l.SetJournal(cw) == nil {
				continue // the image took fewer writes
			}
			require.ErrorIs(t, w.l.JournalErr(), reserve.ErrJournal)
			assert.Equal(t, before, export(t, w.l))
			_, err := w.l.Reserve(snapshot.MustPodInfo(w.pods[0]), "n0")
			require.ErrorIs(t, err, reserve.ErrJournal)
			r := reserve.New()
			res, err := r.Replay(bytes.NewReader(cw.Bytes()))
			require.NoError(t, err)
			assert.Equal(t, int64(cw.Len()), res.Torn, "%s at write %d", mode.name, failAt)
			assert.Empty(t, ownState(r), "%s at write %d: a partial image replayed part of the state", mode.name, failAt)
		}
	}
}
