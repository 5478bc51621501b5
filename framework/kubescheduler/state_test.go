package kubescheduler

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	fwk "k8s.io/kube-scheduler/framework"
)

// countingState is a CycleState that counts the reads of each key.
type countingState struct {
	*fakeCycleState
	reads map[fwk.StateKey]int
}

func newCountingState() *countingState {
	return &countingState{newCycleState(), map[fwk.StateKey]int{}}
}

func (c *countingState) Read(k fwk.StateKey) (fwk.StateData, error) {
	c.reads[k]++
	return c.fakeCycleState.Read(k)
}

// clone is another state holding what c holds, as upstream's
// CycleState.Clone (preemption, nominated pods) makes.
func (c *countingState) clone() *countingState {
	d := newCountingState()
	for k, v := range c.m {
		d.m[k] = v.Clone()
	}
	return d
}

// valueState is a CycleState that is not a pointer and not comparable:
// comparing two of them panics.
type valueState struct {
	fwk.CycleState
	m map[fwk.StateKey]fwk.StateData
}

func (c valueState) Read(k fwk.StateKey) (fwk.StateData, error) {
	if d, ok := c.m[k]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%s: %w", k, fwk.ErrNotFound)
}
func (c valueState) Write(k fwk.StateKey, d fwk.StateData) { c.m[k] = d }

// A plugin remembers the state it wrote last with the CycleState it
// wrote it to: Filter and Score with that state read no map, and with
// any other state (an earlier cycle's, a clone, a state of a type that
// is not a pointer) read that state's own — never the remembered one.
func TestStateRemembered(t *testing.T) {
	ctx := context.Background()
	full := newNodeInfo(node("full", "2", "4Gi"), 1)
	full.addPod(pod("f1", "1500m", "1Gi"))
	roomy := newNodeInfo(node("roomy", "4", "8Gi"), 1)
	h := cluster(full, roomy)
	pl, err := NewSchedkitFit(ctx, nil, h)
	require.NoError(t, err)
	fp := pl.(*FilterPlugin)
	big, tiny := pod("big", "1", "1Gi"), pod("tiny", "100m", "100Mi")

	bigCS, tinyCS := newCountingState(), newCountingState()
	_, st := fp.PreFilter(ctx, bigCS, big, infos(h))
	require.True(t, st.IsSuccess())
	assert.Equal(t, []string{"Insufficient cpu"}, fp.Filter(ctx, bigCS, big, full).Reasons())
	assert.Zero(t, bigCS.reads[fp.key], "the state just written is remembered")

	_, st = fp.PreFilter(ctx, tinyCS, tiny, infos(h))
	require.True(t, st.IsSuccess())
	assert.True(t, fp.Filter(ctx, tinyCS, tiny, full).IsSuccess())
	assert.Zero(t, tinyCS.reads[fp.key])
	// The earlier cycle's state is read from its map: big still does
	// not fit (the remembered state is tiny's, which would pass).
	assert.Equal(t, []string{"Insufficient cpu"}, fp.Filter(ctx, bigCS, big, full).Reasons())
	assert.Equal(t, 1, bigCS.reads[fp.key])
	// A clone of big's state is another state: read from its map.
	bigClone := bigCS.clone()
	assert.Equal(t, []string{"Insufficient cpu"}, fp.Filter(ctx, bigClone, big, full).Reasons())
	assert.Equal(t, 1, bigClone.reads[fp.key])

	// A state that is not a pointer: written, not remembered, and never
	// compared (comparing two would panic).
	vs, vs2 := valueState{m: map[fwk.StateKey]fwk.StateData{}}, valueState{m: map[fwk.StateKey]fwk.StateData{}}
	_, st = fp.PreFilter(ctx, vs, big, infos(h))
	require.True(t, st.IsSuccess())
	_, st = fp.PreFilter(ctx, vs2, tiny, infos(h))
	require.True(t, st.IsSuccess())
	assert.Equal(t, []string{"Insufficient cpu"}, fp.Filter(ctx, vs, big, full).Reasons())
	assert.True(t, fp.Filter(ctx, vs2, tiny, full).IsSuccess())
	assert.True(t, fp.Filter(ctx, tinyCS, tiny, full).IsSuccess())
	// A pointer state remembered, then asked with a value state.
	_, st = fp.PreFilter(ctx, tinyCS, tiny, infos(h))
	require.True(t, st.IsSuccess())
	assert.Equal(t, []string{"Insufficient cpu"}, fp.Filter(ctx, vs, big, full).Reasons())

	// Score: two pods whose scores of roomy differ; each cycle's Score
	// answers its own pod's.
	sl, err := NewSchedkitScore(ctx, nil, h)
	require.NoError(t, err)
	sp := sl.(*ScorePlugin)
	scoreOf := func(cs fwk.CycleState, p fwk.NodeInfo) int64 {
		s, st := sp.Score(ctx, cs, nil, p)
		require.True(t, st.IsSuccess(), "%v", st)
		return s
	}
	bigSC, tinySC := newCountingState(), newCountingState()
	require.True(t, sp.PreScore(ctx, bigSC, big, infos(h)).IsSuccess())
	bigScore := scoreOf(bigSC, roomy)
	assert.Zero(t, bigSC.reads[sp.key])
	require.True(t, sp.PreScore(ctx, tinySC, tiny, infos(h)).IsSuccess())
	tinyScore := scoreOf(tinySC, roomy)
	require.NotEqual(t, bigScore, tinyScore, "the test's pods must score roomy differently")
	assert.Equal(t, bigScore, scoreOf(bigSC, roomy), "the earlier cycle's score")
	assert.Equal(t, 1, bigSC.reads[sp.key])
	assert.Equal(t, tinyScore, scoreOf(tinySC, roomy))
	assert.Zero(t, tinySC.reads[sp.key])
}
