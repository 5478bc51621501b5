package reserve_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestRaceLastCapacity: two goroutines race for a node's last 1000m; exactly
// one wins, every round. Run with -race.
func TestRaceLastCapacity(t *testing.T) {
	rounds := 500
	if testing.Short() {
		rounds = 50
	}
	for r := range rounds {
		l := newLedger(t, node("n1", "4"))
		_, err := l.Reserve(pod("filler", "3"), "n1")
		require.NoError(t, err)
		var wins atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := pod(fmt.Sprintf("racer-%d", g), "1")
				<-start
				reasons, err := l.Reserve(p, "n1")
				if err != nil {
					t.Error(err)
				}
				if reasons == nil {
					wins.Add(1)
				}
			}()
		}
		close(start)
		wg.Wait()
		require.Equal(t, int32(1), wins.Load(), "round %d: winners", r)
		u, _ := l.Usage("n1")
		require.Equal(t, int64(4000), u.Held.MilliCPU(), "round %d", r)
	}
}

// TestRaceManyReservers: 8 goroutines reserve 250m pods on 4 nodes of 4 cpu
// (capacity for 64) until none fits; exactly 64 holds land, no node is
// over-committed.
func TestRaceManyReservers(t *testing.T) {
	l := reserve.New()
	nodes := []string{"n0", "n1", "n2", "n3"}
	for _, n := range nodes {
		require.NoError(t, l.AddNode(st.MakeNode(n).Capacity("cpu", "4", "pods", "100").Obj()))
	}
	var landed atomic.Int32
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				p := pod(fmt.Sprintf("g%d-%d", g, i), "250m")
				ok := false
				for _, n := range nodes {
					reasons, err := l.Reserve(p, n)
					if err != nil {
						t.Error(err)
						return
					}
					if reasons == nil {
						ok = true
						landed.Add(1)
						break
					}
				}
				if !ok {
					return
				}
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, int32(64), landed.Load())
	assert.Len(t, l.Holds(), 64)
	for _, n := range nodes {
		u, _ := l.Usage(n)
		assert.Equal(t, int64(4000), u.Held.MilliCPU(), n)
	}
}

// TestRaceSamePodTwoNodes: two goroutines reserve the same pod on two
// nodes; exactly one holds it, the other gets ErrConflict.
func TestRaceSamePodTwoNodes(t *testing.T) {
	for r := range 200 {
		l := newLedger(t, node("n1", "4"), node("n2", "4"))
		p := pod("x", "1")
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for g, n := range []string{"n1", "n2"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[g] = l.Reserve(p, n)
			}()
		}
		wg.Wait()
		conflicts := 0
		for _, err := range errs {
			if errors.Is(err, reserve.ErrConflict) {
				conflicts++
			} else {
				require.NoError(t, err)
			}
		}
		require.Equal(t, 1, conflicts, "round %d", r)
		require.Len(t, l.Holds(), 1)
	}
}

// TestRaceMixed runs reservers, binders (Confirm + informer report),
// failers (Unreserve), deleters, gangs, expiry, node resizes, snapshot
// readers and a journal at once; afterwards the ledger's aggregates equal
// a fresh recount (Export→Import) and the journal rebuilds it.
func TestRaceMixed(t *testing.T) {
	l := reserve.New()
	var journal syncBuffer
	require.NoError(t, l.SetJournal(&journal))
	nodes := []string{"n0", "n1", "n2", "n3"}
	for _, n := range nodes {
		require.NoError(t, l.AddNode(st.MakeNode(n).Capacity("cpu", "8", "memory", "8Gi", "pods", "20").Obj()))
	}
	iters := 400
	if testing.Short() {
		iters = 100
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range iters {
				pw := st.MakePod(fmt.Sprintf("g%d-%d", g, i%40)).Req("cpu", "300m", "memory", "256Mi")
				pi := snapshot.MustPodInfo(pw.Obj())
				n := nodes[(g+i)%len(nodes)]
				reasons, err := l.ReserveUntil(pi, n, time.Unix(int64(i%7), 0))
				if err != nil && !errors.Is(err, reserve.ErrConflict) {
					t.Error(err)
					return
				}
				if err != nil || reasons != nil {
					continue
				}
				switch i % 4 {
				case 0:
					l.Unreserve(pi.Key())
				case 1:
					_ = l.Confirm(pi.Key())
					if err := l.AddPod(pw.Node(n).Obj()); err != nil {
						t.Error(err)
					}
				case 2:
					l.RemovePod(pi.Key())
				}
			}
		}()
	}
	wg.Add(3)
	go func() { // gangs
		defer wg.Done()
		for i := range iters / 4 {
			var ms []reserve.GangMember
			for j := range 3 {
				ms = append(ms, reserve.GangMember{Pod: pod(fmt.Sprintf("gang%d-%d", i, j), "500m"), Node: nodes[j]})
			}
			if _, err := l.ReserveGang(ms, time.Time{}); err != nil && !errors.Is(err, reserve.ErrConflict) {
				t.Error(err)
			}
		}
	}()
	go func() { // expiry and node resizes
		defer wg.Done()
		for i := range iters / 4 {
			l.Expire(time.Unix(int64(i%7), 0))
			cpu := []string{"4", "8", "12"}[i%3]
			if err := l.UpdateNode(st.MakeNode(nodes[i%4]).Capacity("cpu", cpu, "memory", "8Gi", "pods", "20").Obj()); err != nil {
				t.Error(err)
			}
		}
	}()
	go func() { // readers
		defer wg.Done()
		for range iters / 4 {
			snap := l.Snapshot()
			for _, ni := range snap.Nodes() {
				_ = ni.Requested().MilliCPU()
			}
			_ = l.Holds()
		}
	}()
	wg.Wait()
	require.NoError(t, l.JournalErr())
	checkRebuild(t, l, journal.Bytes())
}

// syncBuffer is a bytes.Buffer safe for the test's own concurrent reads;
// the ledger writes under its lock.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.b...)
}
