package reserve_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// ownState describes the ledger's own state — what the journal rebuilds.
func ownState(l *reserve.Ledger) string {
	var b strings.Builder
	for _, h := range l.Holds() {
		fmt.Fprintf(&b, "hold %s@%s %s dl=%v res=%s drawn=[%v]\n", h.Pod.Key(), h.Node, h.Phase, h.Deadline, h.Reservation, h.Drawn)
	}
	for _, r := range l.Reservations() {
		fmt.Fprintf(&b, "reservation %s@%s once=%v alloc=[%v] pods=%v\n", r.Name, r.Node, r.AllocateOnce, r.Allocated, r.Pods)
	}
	return b.String()
}

// journalScenario runs a fixed sequence of operations that writes every
// kind of record, one record at most per step, and returns the journal and,
// for each record boundary, the ledger's own state there.
func journalScenario(t testing.TB) (journal []byte, states map[int]string, final *reserve.Ledger) {
	l := reserve.New()
	var buf bytes.Buffer
	require.NoError(t, l.SetJournal(&buf))
	states = map[int]string{}
	mark := func() {
		states[buf.Len()] = ownState(l)
	}
	mark()
	mk := func(name, cpu string, labels ...string) *v1.Pod {
		w := st.MakePod(name).Req("cpu", cpu)
		for i := 0; i+1 < len(labels); i += 2 {
			w.Label(labels[i], labels[i+1])
		}
		return w.Obj()
	}
	bindObj := func(p *v1.Pod, node string) *v1.Pod {
		q := p.DeepCopy()
		q.Spec.NodeName = node
		return q
	}
	for _, n := range []string{"n1", "n2"} {
		require.NoError(t, l.AddNode(st.MakeNode(n).Capacity("cpu", "8", "pods", "10").Obj()))
		mark()
	}
	deadline := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, b, c, d, e := mk("a", "1", "app", "web"), mk("b", "2"), mk("c", "1"), mk("d", "1", "app", "web"), mk("e", "500m")
	steps := []func(){
		func() {
			_, err := l.AddReservation(reserve.Reservation{Name: "r-web", Node: "n1", Capacity: st.List("cpu", "3"),
				Owner: reserve.Owner{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})
			require.NoError(t, err)
		},
		func() {
			_, err := l.AddReservation(reserve.Reservation{Name: "r-once", Node: "n2", Capacity: st.List("cpu", "2"), AllocateOnce: true,
				Owner: reserve.Owner{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})
			require.NoError(t, err)
		},
		func() { mustReserve(t, l, a, "n1", time.Time{}) }, // draws 1 cpu of r-web
		func() { mustReserve(t, l, b, "n2", deadline) },
		func() {
			unfit, err := l.ReserveGang([]reserve.GangMember{{Pod: snapshot.MustPodInfo(c), Node: "n1"}, {Pod: snapshot.MustPodInfo(d), Node: "n2"}}, time.Time{})
			require.NoError(t, err)
			require.Nil(t, unfit)
		}, // d draws on r-once
		func() { require.NoError(t, l.Confirm(snapshot.KeyOf(a))) },
		func() { require.NoError(t, l.AddPod(bindObj(a, "n1"))) },   // settle a
		func() { require.NoError(t, l.Confirm(snapshot.KeyOf(d))) }, // consumes r-once
		func() { assert.Len(t, l.Expire(deadline), 1) },             // b expires
		func() { assert.True(t, l.Unreserve(snapshot.KeyOf(c))) },
		func() { mustReserve(t, l, e, "n2", deadline.Add(time.Hour)) },
		func() { assert.True(t, l.RemovePod(snapshot.KeyOf(e))) }, // deleted while held
		func() { require.NoError(t, l.AddPod(bindObj(d, "n2"))) }, // settle d
		func() { assert.True(t, l.RemovePod(snapshot.KeyOf(a))) }, // bound drawer deleted: share returns
		func() { require.NoError(t, l.RemoveReservation("r-web")) },
	}
	for i, step := range steps {
		before := buf.Len()
		step()
		require.LessOrEqual(t, strings.Count(buf.String()[before:], `"op":`), 1, "step %d wrote more than one record", i)
		mark()
	}
	require.NoError(t, l.JournalErr())
	return buf.Bytes(), states, l
}

func mustReserve(t testing.TB, l *reserve.Ledger, p *v1.Pod, node string, deadline time.Time) {
	t.Helper()
	reasons, err := l.ReserveUntil(snapshot.MustPodInfo(p), node, deadline)
	require.NoError(t, err)
	require.Nil(t, reasons)
}

// TestJournalTornAtEveryOffset cuts the journal at every byte offset:
// replay applies every complete record, reports the torn tail, and the
// ledger's own state equals the live ledger's state after the last
// complete record.
func TestJournalTornAtEveryOffset(t *testing.T) {
	journal, states, _ := journalScenario(t)
	boundaries := make([]int, 0, len(states))
	for off := range states {
		boundaries = append(boundaries, off)
	}
	t.Logf("journal: %d bytes, %d record boundaries", len(journal), len(boundaries))
	last := 0
	for cut := 0; cut <= len(journal); cut++ {
		if _, ok := states[cut]; ok {
			last = cut
		}
		l := reserve.New()
		res, err := l.Replay(bytes.NewReader(journal[:cut]))
		require.NoError(t, err, "cut at %d", cut)
		require.Equal(t, int64(last), res.Bytes, "cut at %d: Bytes", cut)
		require.Equal(t, int64(cut-last), res.Torn, "cut at %d: Torn", cut)
		require.Equal(t, states[last], ownState(l), "cut at %d: state", cut)
	}
}

// TestJournalReplayMatchesLive: the full journal, replayed onto the
// informer's final state, gives the live ledger's export; and a journal
// attached late (image of a busy ledger) replays to the same.
func TestJournalReplayMatchesLive(t *testing.T) {
	journal, _, live := journalScenario(t)
	checkRebuild(t, live, journal)

	var late bytes.Buffer
	require.NoError(t, live.SetJournal(&late))
	checkRebuild(t, live, late.Bytes())

	// A begin record in the middle resets: old journal + new image
	// replays to the same state.
	both := append(append([]byte{}, journal...), late.Bytes()...)
	checkRebuild(t, live, both)
}

// frame encodes one journal record (format version 2), independently of
// the package's encoder.
func frame(payload string) []byte {
	tab := crc32.MakeTable(crc32.Castagnoli)
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, tab))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(append(bytes.Clone(b), payload...), tab))
	return append(b, payload...)
}

// frameV1 encodes a record of journal format version 1.
func frameV1(payload string) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum([]byte(payload), crc32.MakeTable(crc32.Castagnoli)))
	return append(b, payload...)
}

func TestJournalCorrupt(t *testing.T) {
	good, _, _ := journalScenario(t)
	begin := frame(`{"op":"begin","version":2}`)
	flip := bytes.Clone(good)
	flip[len(good)/2] ^= 0xff
	unreserve := frame(`{"op":"unreserve","pods":[{"namespace":"default","name":"a"}]}`)
	longer := append(bytes.Clone(begin), unreserve...)
	longer[len(begin)+1] ^= 0x10 // the length now runs past the end: not a torn tail
	torn := append(append(bytes.Clone(begin), unreserve[:20]...), unreserve...)
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"checksum", flip},
		{"length runs past the end", longer},
		{"torn record before an intact one", torn},
		{"NULs before an intact record", append(append(bytes.Clone(begin), make([]byte, 30)...), unreserve...)},
		{"garbage tail", append(bytes.Clone(begin), []byte("this is not a journal record")...)},
		{"version 1 journal", append(frameV1(`{"op":"begin","version":1}`), frameV1(`{"op":"unreserve","pods":[{"namespace":"default","name":"a"}]}`)...)},
		{"no begin", frame(`{"op":"unreserve","pods":[{"namespace":"default","name":"a"}]}`)},
		{"bad version", frame(`{"op":"begin","version":7}`)},
		{"bad json", append(bytes.Clone(begin), frame(`{"op":`)...)},
		{"unknown op", append(bytes.Clone(begin), frame(`{"op":"teleport"}`)...)},
		{"huge length", append(bytes.Clone(begin), 0xff, 0xff, 0xff, 0xff, 1, 1, 1, 1, 1, 1, 1, 1)},
		{"confirm of nothing", append(bytes.Clone(begin), frame(`{"op":"confirm","pods":[{"namespace":"default","name":"a"}]}`)...)},
		{"share of unknown reservation", append(bytes.Clone(begin), frame(`{"op":"hold","holds":[{"pod":{"metadata":{"name":"a","namespace":"default"}},"node":"n1","reservation":"r","drawn":{"cpu":1}}]}`)...)},
		{"share of unknown reservation in the image", frame(`{"op":"begin","version":2,"draws":[{"pod":{"namespace":"default","name":"a"},"reservation":"r","drawn":{"cpu":1}}]}`)},
		{"negative quantity", append(bytes.Clone(begin), frame(`{"op":"hold","holds":[{"pod":{"metadata":{"name":"a"},"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"-1"}}}]}},"node":"n1"}]}`)...)},
		{"hold twice", append(bytes.Clone(begin), append(
			frame(`{"op":"hold","holds":[{"pod":{"metadata":{"name":"a","namespace":"default"}},"node":"n1"}]}`),
			frame(`{"op":"hold","holds":[{"pod":{"metadata":{"name":"a","namespace":"default"}},"node":"n2"}]}`)...)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := reserve.New()
			require.NoError(t, l.AddNode(node("n1", "4")))
			before := export(t, l)
			_, err := l.Replay(bytes.NewReader(tc.data))
			require.ErrorIs(t, err, reserve.ErrCorruptJournal)
			var ce *reserve.CorruptJournalError
			require.ErrorAs(t, err, &ce)
			assert.Contains(t, err.Error(), fmt.Sprintf("at offset %d", ce.Offset))
			t.Log(err)
			assert.Equal(t, before, export(t, l), "a failed replay changed the ledger")
		})
	}
}

func TestReplayIntoBusyLedger(t *testing.T) {
	journal, _, _ := journalScenario(t)
	l := newLedger(t, node("n1", "4"))
	mustReserve(t, l, st.MakePod("x").Req("cpu", "1").Obj(), "n1", time.Time{})
	_, err := l.Replay(bytes.NewReader(journal))
	require.ErrorIs(t, err, reserve.ErrNotEmpty)
}

// failingWriter accepts limit bytes, then fails every write.
type failingWriter struct {
	bytes.Buffer
	limit int
}

var errDisk = errors.New("disk full")

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.Len()+len(p) > w.limit {
		n := w.limit - w.Len()
		w.Buffer.Write(p[:n])
		return n, errDisk
	}
	return w.Buffer.Write(p)
}

// TestJournalWriteFailure: a record cut short refuses the change it was
// for (nothing changes), the broken journal refuses the caller's later
// decisions too (a release it could not record would come back after a
// restart), its bytes replay to exactly the ledger, and a new writer
// recovers with a full image.
func TestJournalWriteFailure(t *testing.T) {
	l := newLedger(t, node("n1", "4"))
	a, b := pod("a", "1"), pod("b", "1")
	w := &failingWriter{limit: 1 << 20}
	require.NoError(t, l.SetJournal(w))
	_, err := l.Reserve(a, "n1")
	require.NoError(t, err)
	w.limit = w.Len() + 10 // the next record is cut after 10 bytes
	before := export(t, l)
	_, err = l.Reserve(b, "n1")
	require.ErrorIs(t, err, reserve.ErrJournal)
	require.ErrorIs(t, err, errDisk)
	assert.Equal(t, before, export(t, l), "a Reserve that could not be journaled changed the ledger")
	assert.False(t, l.Unreserve(a.Key()), "a release the journal cannot record is refused")
	assert.Equal(t, before, export(t, l), "a refused Unreserve changed the ledger")
	require.ErrorIs(t, l.JournalErr(), reserve.ErrJournal)
	_, err = l.Reserve(b, "n1")
	require.ErrorIs(t, err, reserve.ErrJournal, "the journal stays broken until replaced")

	// The broken journal replays, up to its torn tail, to the ledger.
	r := newLedger(t, node("n1", "4"))
	res, err := r.Replay(bytes.NewReader(w.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, int64(10), res.Torn)
	assert.Equal(t, export(t, l), export(t, r))

	var fresh bytes.Buffer
	require.NoError(t, l.SetJournal(&fresh))
	require.NoError(t, l.JournalErr())
	assert.True(t, l.Unreserve(a.Key()))
	mustReserve(t, l, b.Pod(), "n1", time.Time{})
	checkRebuild(t, l, fresh.Bytes())

	require.NoError(t, l.SetJournal(nil))
	mustReserve(t, l, st.MakePod("c").Req("cpu", "1").Obj(), "n1", time.Time{})
}

// FuzzReplay feeds arbitrary bytes to the journal reader: it never panics;
// on success the result replays the same from its complete prefix, the
// ledger exports and imports; on failure the ledger is unchanged.
func FuzzReplay(f *testing.F) {
	journal, _, _ := journalScenario(f)
	f.Add(journal)
	f.Add(journal[:len(journal)/2])
	f.Add(journal[:len(journal)-1])
	f.Add([]byte{})
	f.Add(frame(`{"op":"begin","version":2}`))
	f.Add(append(frame(`{"op":"begin","version":2}`), frame(`{"op":"hold","holds":[{"pod":{"metadata":{"name":"a","namespace":"default"}},"node":"n1","deadline":"2026-01-01T00:00:00Z"}]}`)...))
	f.Add(append(frame(`{"op":"begin","version":2}`), frame(`{"op":"reservation","reservation":{"name":"r","node":"n1","capacity":{"cpu":"1"},"owner":{"controller":"u"},"allocateOnce":true}}`)...))
	f.Add(append(bytes.Clone(journal), make([]byte, 16)...))
	corrupt := bytes.Clone(journal)
	corrupt[len(corrupt)/3] ^= 0x5a
	f.Add(corrupt)
	f.Fuzz(func(t *testing.T, data []byte) {
		l := reserve.New()
		require.NoError(t, l.AddNode(node("n1", "4")))
		before := export(t, l)
		res, err := l.Replay(bytes.NewReader(data))
		if err != nil {
			require.Equal(t, before, export(t, l), "failed replay changed the ledger")
			return
		}
		require.Equal(t, int64(len(data)), res.Bytes+res.Torn)
		// Nothing intact was dropped: the torn bytes hold no intact
		// record at any offset (checked by the test's own decoder).
		require.Equal(t, -1, firstIntactFrame(data[res.Bytes:], 0), "the torn tail holds an intact record")
		again := reserve.New()
		require.NoError(t, again.AddNode(node("n1", "4")))
		res2, err := again.Replay(bytes.NewReader(data[:res.Bytes]))
		require.NoError(t, err)
		require.Zero(t, res2.Torn)
		got := export(t, l)
		require.Equal(t, got, export(t, again))
		imp, err := reserve.Import(strings.NewReader(got))
		require.NoError(t, err)
		require.Equal(t, got, export(t, imp))
		_ = l.Snapshot()
	})
}

// TestJournalShortTailWithImpossibleLength: garbage appended to an intact
// journal is corruption as soon as its length field is readable and
// outside [1, 1 GiB], even when the garbage is shorter than a record
// header ("hello world" reads as length 0x68656c6c); a short tail whose
// length is possible, or NULs, stays a torn tail.
func TestJournalShortTailWithImpossibleLength(t *testing.T) {
	journal, _, _ := journalScenario(t)
	for _, tail := range []string{"hello world", "\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x01", "\x00\x00\x00\x00\x07", "\x7f\xff\xff\xff"} {
		l := reserve.New()
		before := export(t, l)
		res, err := l.Replay(bytes.NewReader(append(bytes.Clone(journal), tail...)))
		require.ErrorIs(t, err, reserve.ErrCorruptJournal, "tail %q: %+v", tail, res)
		var ce *reserve.CorruptJournalError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, int64(len(journal)), ce.Offset, "tail %q", tail)
		assert.Contains(t, err.Error(), "outside [1, 1073741824]", "tail %q", tail)
		assert.Equal(t, before, export(t, l), "a failed replay changed the ledger")
	}
	for _, tail := range []string{"\x00\x00\x01\x00abc", "\x00\x00\x00", "\x00\x00\x00\x00\x00\x00", "\x00\x00\x02"} {
		res, err := reserve.New().Replay(bytes.NewReader(append(bytes.Clone(journal), tail...)))
		require.NoError(t, err, "tail %q", tail)
		assert.Equal(t, int64(len(tail)), res.Torn, "tail %q", tail)
	}
}
