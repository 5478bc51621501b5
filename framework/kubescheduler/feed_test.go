package kubescheduler

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"

	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// TestFeedCountsRejectedEvents: the ledger is fed by the scheduler's real
// informers (on a fake clientset); an event the ledger rejects — a node
// with negative allocatable, a bound pod with a negative request — is
// counted (and logged), not dropped, and the ledger keeps its state; good
// events, deletes and a delete of the rejected node go through without
// errors. Before, the feed discarded these errors (`_ = l.AddNode(n)`).
func TestFeedCountsRejectedEvents(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cs := fake.NewClientset()
	h := &fakeHandle{lister: &fakeLister{}, informers: informers.NewSharedInformerFactory(cs, 0)}
	pl, err := NewSchedkitReserve(ctx, nil, h)
	require.NoError(t, err)
	rp := pl.(*ReservePlugin)
	h.informers.Start(ctx.Done())
	h.informers.WaitForCacheSync(ctx.Done())

	good := node("good", "4", "8Gi")
	bad := node("bad", "4", "8Gi")
	bad.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("-1")
	_, err = cs.CoreV1().Nodes().Create(ctx, good, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Nodes().Create(ctx, bad, metav1.CreateOptions{})
	require.NoError(t, err)
	eventually(t, func() bool { return rp.InformerErrors() == 1 && len(rp.Ledger().Nodes()) == 1 }, "the bad node counted, the good one added")
	assert.Equal(t, []string{"good"}, rp.Ledger().Nodes())

	ok := pod("ok", "1", "1Gi")
	ok.Spec.NodeName = "good"
	neg := pod("neg", "1", "1Gi")
	neg.Spec.NodeName = "good"
	neg.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("-1Gi")
	for _, p := range []*v1.Pod{ok, neg} {
		_, err = cs.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	eventually(t, func() bool {
		_, _, known := rp.Ledger().PodPhase(snapshot.KeyOf(ok))
		return rp.InformerErrors() == 2 && known
	}, "the bad pod counted, the good one bound")
	_, _, known := rp.Ledger().PodPhase(snapshot.KeyOf(neg))
	assert.False(t, known, "the ledger keeps its state after a rejected pod")

	require.NoError(t, cs.CoreV1().Pods("default").Delete(ctx, "ok", metav1.DeleteOptions{}))
	require.NoError(t, cs.CoreV1().Nodes().Delete(ctx, "bad", metav1.DeleteOptions{}))
	require.NoError(t, cs.CoreV1().Nodes().Delete(ctx, "good", metav1.DeleteOptions{}))
	eventually(t, func() bool { return len(rp.Ledger().Nodes()) == 0 }, "nodes deleted")
	_, _, known = rp.Ledger().PodPhase(snapshot.KeyOf(ok))
	assert.False(t, known, "deleted pod freed")
	assert.Equal(t, int64(2), rp.InformerErrors(), "deleting the node the ledger never took is no error")
}

func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, 5*time.Millisecond, msg)
}

// failAfter is a journal writer that fails after n writes.
type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n == 0 {
		return 0, errors.New("disk full")
	}
	w.n--
	return len(p), nil
}

// TestPostBindLogsJournalError: a Confirm the ledger refuses because its
// journal broke is logged, not dropped; ErrNotHeld (the informer reported
// the pod first) is not an error. Before, PostBind discarded both.
func TestPostBindLogsJournalError(t *testing.T) {
	var logged []string
	ctx := klog.NewContext(context.Background(), funcr.New(func(prefix, args string) { logged = append(logged, args) }, funcr.Options{}))
	l := reserve.New()
	n := node("n", "4", "8Gi")
	require.NoError(t, l.AddNode(n))
	require.NoError(t, l.SetJournal(&failAfter{n: 2})) // the begin record and one hold
	rp, err := WrapLedger("R", l, cluster(newNodeInfo(n, 1)))
	require.NoError(t, err)
	p := pod("p", "1", "1Gi")
	require.True(t, rp.Reserve(ctx, newCycleState(), p, "n").IsSuccess())
	rp.PostBind(ctx, newCycleState(), pod("never-held", "1", "1Gi"), "n")
	assert.Empty(t, logged, "ErrNotHeld is not logged")
	rp.PostBind(ctx, newCycleState(), p, "n")
	require.Len(t, logged, 1)
	assert.Contains(t, logged[0], "journal write failed")
	assert.Contains(t, logged[0], "default/p")
}
