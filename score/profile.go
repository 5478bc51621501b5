package score

import (
	"fmt"
	"strings"
	"sync"

	"github.com/schedkit/schedkit/internal/nodeview"
	"github.com/schedkit/schedkit/internal/scoring"
	"github.com/schedkit/schedkit/snapshot"
)

// Weighted is a scorer with its weight in a [Profile]. A node's total is
// the sum over the profile of Weight × the scorer's final score.
type Weighted struct {
	Scorer Scorer
	// Weight multiplies the scorer's score. 0 means 1 (upstream: a weight
	// of zero is not permitted, plugins are disabled by leaving them out);
	// negative weights are rejected.
	Weight int64
}

// Profile is a weighted list of scorers, upstream's score extension point
// of a scheduling profile: for one pod it prepares every scorer once,
// scores the candidate nodes, normalises where a scorer asks for it, checks
// every final score is in [MinScore, MaxScore], and sums weight × score per
// node.
//
// The zero Profile has no scorers and scores every node 0. A Profile is
// immutable after [NewProfile] and safe for concurrent use.
type Profile struct {
	entries []Weighted
	pool    sync.Pool // *run
	// mayFuse: the profile has a LeastAllocated and a BalancedAllocation
	// over cpu and memory, which fuse for every pod they both prepare
	// (findFusedPair), so that Score keeps the column of records.
	mayFuse bool
}

// NewProfile builds a profile with upstream's rules (kube-scheduler v1.37
// framework/runtime/framework.go getValidScoreWeights): weight 0 becomes
// 1; a negative weight, a nil scorer, an empty Name(), a [PerNode] with a
// nil function, a repeated scorer name, or a sum of
// weight × MaxScore that would exceed [MaxTotalScore] is an error wrapping
// [ErrInvalidConfig] that names the scorer. The scorers keep their order
// (it is the order of Explain's rows). O(scorers).
func NewProfile(scorers ...Weighted) (*Profile, error) {
	p := &Profile{entries: make([]Weighted, 0, len(scorers))}
	seen := make(map[string]bool, len(scorers))
	var total int64
	for i, w := range scorers {
		if w.Scorer == nil {
			return nil, fmt.Errorf("score: profile entry %d: scorer is nil: %w", i, ErrInvalidConfig)
		}
		name := w.Scorer.Name()
		if name == "" {
			return nil, fmt.Errorf("score: profile entry %d (%T): Name() is empty: %w", i, w.Scorer, ErrInvalidConfig)
		}
		if c, ok := w.Scorer.(interface{ check() error }); ok {
			if err := c.check(); err != nil {
				return nil, fmt.Errorf("score: profile entry %d: scorer %q: %w: %w", i, name, err, ErrInvalidConfig)
			}
		}
		if seen[name] {
			return nil, fmt.Errorf("score: profile entry %d: scorer %q appears twice: %w", i, name, ErrInvalidConfig)
		}
		seen[name] = true
		if w.Weight < 0 {
			return nil, fmt.Errorf("score: scorer %q: weight %d is negative: %w", name, w.Weight, ErrInvalidConfig)
		}
		if w.Weight == 0 {
			w.Weight = 1
		}
		if w.Weight > (MaxTotalScore-total)/MaxScore {
			return nil, fmt.Errorf("score: scorer %q: weight %d: total score of the profile could overflow: %w", name, w.Weight, ErrInvalidConfig)
		}
		total += w.Weight * MaxScore
		p.entries = append(p.entries, w)
	}
	p.mayFuse = hasCPUMemScorer[*leastAllocated](p.entries) && hasCPUMemScorer[*balancedAllocation](p.entries)
	return p, nil
}

// hasCPUMemScorer reports whether entries hold a scorer of type S
// (LeastAllocated or BalancedAllocation) over cpu and memory, which
// prepares to the fused pair's fast path.
func hasCPUMemScorer[S interface{ resources() []resource }](entries []Weighted) bool {
	for _, e := range entries {
		if s, ok := e.Scorer.(S); ok {
			rs := s.resources()
			if len(rs) == 2 && rs[0].kind+rs[1].kind == kindCPU+kindMemory && rs[0].kind != rs[1].kind {
				return true
			}
		}
	}
	return false
}

// MustProfile is NewProfile that panics on error; for package-level
// variables, tests and examples.
func MustProfile(scorers ...Weighted) *Profile {
	p, err := NewProfile(scorers...)
	if err != nil {
		panic(err)
	}
	return p
}

// Scorers returns a copy of the profile's scorers with their effective
// weights, in order.
func (p *Profile) Scorers() []Weighted { return append([]Weighted(nil), p.entries...) }

// chunkSize is how many nodes every non-normalising scorer scores in turn
// before the profile moves on, so that the chunk's NodeInfos stay in cache
// across scorers.
const chunkSize = 128

// run is the per-call scratch of Profile.Score, pooled: a podProfile and
// one int64 per node for the normalising scorers' raw scores.
type run struct {
	pp   podProfile
	norm []int64
	col  column
}

func (p *Profile) getRun() *run {
	r, _ := p.pool.Get().(*run)
	if r == nil {
		r = &run{}
	}
	return r
}

// releaser is a PodScorer whose storage its scorer may reuse once its
// only user is done with it (InterPodAffinity's): Profile.Score, which
// prepares and drops its PodScorers within the call, releases them.
type releaser interface{ Release() }

func (p *Profile) putRun(r *run) {
	r.pp.release()
	p.pool.Put(r)
}

// prepare runs every scorer's Prepare; ps[i] is nil for a skipped scorer.
// With local (the pod is one scoring.ProfileNodeLocalFor reported true
// for, over cluster) the scorers that are node-local only for some pods
// are not asked: they promised to return nil.
func (p *Profile) prepare(pod *snapshot.PodInfo, cluster Cluster, ps []PodScorer, local bool) error {
	for i, e := range p.entries {
		if local && isPodNodeLocal(e.Scorer) {
			ps[i] = nil
			continue
		}
		s, err := e.Scorer.Prepare(pod, cluster)
		if err != nil {
			return fmt.Errorf("score: scorer %q: pod %s: %w", e.Scorer.Name(), pod.Key(), err)
		}
		ps[i] = s
	}
	return nil
}

// Score computes the weighted total of every candidate node for pod:
// totals[i] is the total of nodes[i]; totals[:len(nodes)] is overwritten,
// and len(totals) must be at least len(nodes) (Score panics otherwise, like
// an index out of range). nodes are the candidates (upstream: the nodes
// that passed filtering); cluster is the whole cluster (see [Cluster]). It
// may be nil only for a profile of node-local scorers: with a nil cluster
// ImageLocality's image spread sees a cluster with no images, and
// InterPodAffinity and PodTopologySpread, which count pods across the
// cluster, skip the pod (every node scores 0 for them, and Explain marks
// them Skipped) — so pass the snapshot or fork whenever the profile has
// them, as [DefaultProfile] does.
//
// It fails, leaving totals unspecified, if a scorer's Prepare or Normalize
// fails, or a final score is outside [MinScore, MaxScore] (an error
// wrapping [ErrScoreOutOfRange] naming the scorer, node and score).
//
// Cost: O(scorers) Prepare calls, then O(scorers × len(nodes)) with the
// scorers' per-node cost. Allocates nothing per node. Safe for concurrent
// use. In more detail:
//
//   - The nodes are scored in chunks of 128, so that each chunk stays in
//     cache across scorers, and a LeastAllocated and BalancedAllocation
//     pair (as in [DefaultProfile]) is scored in one pass.
//   - That pair is fastest when cluster is a *snapshot.Snapshot or
//     *snapshot.Fork and nodes are at least a quarter of its nodes, in its
//     node order (all of them, or a subset from a rotating start, as a
//     cycle's feasible nodes come). It then reads one 64-byte record per
//     node from an array kept in the pooled scratch and brought up to date
//     per 64-node block by the cluster's block versions: O(nodes/64)
//     version reads and O(NumNodes) pointer compares per call, plus the
//     records of the blocks changed since the scratch last saw the
//     cluster (the whole cluster on first use). Otherwise it reads each
//     node's figures from its NodeInfo.
//   - On amd64 processors with AVX2 and with unit weights (as in
//     DefaultProfile: both scorers at profile weight 1 and cpu and memory
//     at resource weight 1), the records are scored four at a time in
//     vector registers, with the same results bit for bit
//     (GODEBUG=cpu.avx2=off turns that off, as for the runtime). Other
//     processors score one node at a time, and so does every processor for
//     a chunk of 128 nodes holding a node of 2^45 milli-CPU or bytes (32
//     TiB) or more.
//   - The scratch (one int64 per node for normalising scorers; 72 bytes
//     per cluster node for the records, and 64 per candidate of a subset)
//     is pooled and reused; while pooled it keeps the last scored
//     cluster's NodeInfos reachable.
func (p *Profile) Score(pod *snapshot.PodInfo, cluster Cluster, nodes []*snapshot.NodeInfo, totals []int64) error {
	return p.score(pod, cluster, nodes, totals, false)
}

// score is Score; with local, as [Profile.prepare]'s.
func (p *Profile) score(pod *snapshot.PodInfo, cluster Cluster, nodes []*snapshot.NodeInfo, totals []int64, local bool) error {
	n := len(nodes)
	if len(totals) < n {
		panic(fmt.Sprintf("score: Profile.Score: len(totals) = %d < len(nodes) = %d", len(totals), n))
	}
	if pod == nil {
		return fmt.Errorf("score: Profile.Score: pod is nil: %w", ErrInvalidPod)
	}
	r := p.getRun()
	defer p.putRun(r)
	var recs []cpuMemRec
	vecRecs := false
	if p.mayFuse && n > 0 {
		// The fused pair reads one record per node: from the run's
		// column (revalidated by block version) when the candidates lie
		// in the cluster's view order and are at least a quarter of its
		// nodes, so that the column's O(NumNodes) upkeep stays within a
		// constant factor of the scoring it saves.
		if v, ok := nodeview.ViewOf(cluster); ok && 4*n >= v.NumNodes() {
			r.col.sync(v)
			recs, _, vecRecs = r.col.locate(nodes)
		}
	}
	if recs == nil {
		// (Located candidates are the view's nodes: none is nil.)
		for i, ni := range nodes {
			if ni == nil {
				return fmt.Errorf("score: Profile.Score: pod %s: nodes[%d] is nil: %w", pod.Key(), i, ErrInvalidConfig)
			}
		}
	}
	tot := totals[:n]
	clear(tot)
	if len(p.entries) == 0 || n == 0 {
		return nil
	}
	if err := r.pp.init(p, pod, cluster, local); err != nil {
		return err
	}
	if r.pp.fused {
		r.pp.recs = recs
		r.pp.kern.allVec = vecRecs
	}
	for k := range r.pp.NumNormalizing() {
		if cap(r.norm) < n {
			r.norm = make([]int64, n)
		}
		raw := r.norm[:n]
		r.pp.Raw(k, nodes, raw)
		if err := r.pp.AddNormalized(k, nodes, raw, tot); err != nil {
			return err
		}
	}
	return r.pp.AddPlain(nodes, tot)
}

// podProfile is a [Profile] prepared for one pod: every scorer's
// [PodScorer], made once, and the pieces [Profile.Score] is made of. It is
// internal/scoring's PodProfile (see there), which framework's equivalence
// cache scores nodes with in parts.
type podProfile struct {
	p           *Profile
	pod         *snapshot.PodInfo
	ps          []PodScorer // ps[i] is entry i's, nil if it skipped the pod
	plain, norm []int       // entry indexes of the prepared non-normalising / normalising scorers
	pair        fusedPair
	fused       bool
	kern        cpuMemPod // the fused pair's pod side, when fused
	// recs, when not nil, is the record of each node of the current
	// Profile.Score call (in the run's column), read by the fused pair
	// instead of the NodeInfos' lines.
	recs []cpuMemRec
	buf  [chunkSize]int64
}

var _ scoring.PodProfile = (*podProfile)(nil)

// prepareFor prepares every scorer of the profile for pod over cluster
// (cluster may be nil, as for [Profile.Score]): scoring.Prepare. Errors
// are a scorer's Prepare error, naming the scorer and pod, or a nil pod.
// O(scorers); allocates the podProfile and what the scorers' Prepare
// allocate.
func (p *Profile) prepareFor(pod *snapshot.PodInfo, cluster Cluster, local bool) (*podProfile, error) {
	if pod == nil {
		return nil, fmt.Errorf("score: preparing a profile: pod is nil: %w", ErrInvalidPod)
	}
	pp := &podProfile{}
	if err := pp.init(p, pod, cluster, local); err != nil {
		return nil, err
	}
	return pp, nil
}

func (pp *podProfile) init(p *Profile, pod *snapshot.PodInfo, cluster Cluster, local bool) error {
	pp.p, pp.pod = p, pod
	if cap(pp.ps) < len(p.entries) {
		pp.ps = make([]PodScorer, len(p.entries))
	}
	pp.ps = pp.ps[:len(p.entries)]
	if err := p.prepare(pod, cluster, pp.ps, local); err != nil {
		return err
	}
	pp.plain, pp.norm = pp.plain[:0], pp.norm[:0]
	for i, ps := range pp.ps {
		if ps == nil {
			continue
		}
		if _, ok := ps.(Normalizer); ok {
			pp.norm = append(pp.norm, i)
		} else {
			pp.plain = append(pp.plain, i)
		}
	}
	pp.pair, pp.fused = findFusedPair(pp.ps, pp.plain)
	if pp.fused {
		pp.kern = newCPUMemPod(pp.pair.least, pp.pair.balanced, p.entries[pp.pair.la].Weight, p.entries[pp.pair.ba].Weight)
	}
	return nil
}

// release drops the per-pod state (a pooled run keeps its slices).
func (pp *podProfile) release() {
	releaseScorers(pp.ps)
	clear(pp.ps)
	pp.pod, pp.pair, pp.kern, pp.recs = nil, fusedPair{}, cpuMemPod{}, nil
}

// releaseScorers releases the scorers of ps that are releasers; their
// only user is done with them.
func releaseScorers(ps []PodScorer) {
	for _, s := range ps {
		if r, ok := s.(releaser); ok {
			r.Release()
		}
	}
}

// NumNormalizing is scoring.PodProfile's.
func (pp *podProfile) NumNormalizing() int { return len(pp.norm) }

// Raw is scoring.PodProfile's.
func (pp *podProfile) Raw(k int, nodes []*snapshot.NodeInfo, raw []int64) {
	pp.ps[pp.norm[k]].Score(nodes, raw)
}

// AddNormalized is scoring.PodProfile's.
func (pp *podProfile) AddNormalized(k int, nodes []*snapshot.NodeInfo, raw, totals []int64) error {
	i := pp.norm[k]
	raw = raw[:len(nodes)]
	if err := pp.ps[i].(Normalizer).Normalize(nodes, raw); err != nil {
		return fmt.Errorf("score: scorer %q: normalising for pod %s: %w", pp.p.entries[i].Scorer.Name(), pp.pod.Key(), err)
	}
	return pp.p.accumulate(i, nodes, 0, raw, totals)
}

// maxNormalizer is a built-in normalising PodScorer whose Normalize is
// DefaultNormalize (reversed if normalizesByMax says so).
type maxNormalizer interface {
	normalizesByMax() (reverse bool)
}

// NormalizesByMax is scoring.PodProfile's.
func (pp *podProfile) NormalizesByMax(k int) bool {
	_, ok := pp.ps[pp.norm[k]].(maxNormalizer)
	return ok
}

// AddNormalizedByMax is scoring.PodProfile's.
func (pp *podProfile) AddNormalizedByMax(k int, nodes []*snapshot.NodeInfo, raw, totals []int64, maxRaw int64) error {
	i := pp.norm[k]
	raw = raw[:len(nodes)]
	normalizeByMax(raw, max(maxRaw, 0), pp.ps[i].(maxNormalizer).normalizesByMax())
	return pp.p.accumulate(i, nodes, 0, raw, totals)
}

// AddPlain is scoring.PodProfile's.
func (pp *podProfile) AddPlain(nodes []*snapshot.NodeInfo, totals []int64) error {
	if len(pp.plain) == 0 {
		return nil
	}
	return pp.addPlain(nodes, totals, pp.fused, -1)
}

// addPlain adds the plain scorers' weighted scores of nodes to totals,
// chunk by chunk: every plain scorer (part -1), or only those of one part
// (scorerPart). fused: the LeastAllocated+BalancedAllocation pair is
// scored together by cpuMemPod.add.
func (pp *podProfile) addPlain(nodes []*snapshot.NodeInfo, totals []int64, fused bool, part int) error {
	n := len(nodes)
	tot := totals[:n]
	p, pair := pp.p, pp.pair
	for start := 0; start < n; start += chunkSize {
		end := min(start+chunkSize, n)
		chunk := nodes[start:end]
		buf := pp.buf[:end-start]
		if fused {
			lines := nodeview.CPUMemories(chunk)
			if pp.recs != nil {
				pp.kern.add(pp.recs[start:end], lines, tot[start:end])
			} else {
				pp.kern.addLines(lines, tot[start:end])
			}
		}
		for _, i := range pp.plain {
			if (fused && (i == pair.la || i == pair.ba)) || (part >= 0 && scorerPart(p.entries[i].Scorer) != part) {
				continue
			}
			pp.ps[i].Score(chunk, buf)
			if err := p.accumulate(i, nodes, start, buf, tot); err != nil {
				return err
			}
		}
	}
	return nil
}

// Split is scoring.PodProfile's.
func (pp *podProfile) Split() bool {
	for i, ps := range pp.ps {
		if ps == nil {
			continue
		}
		switch scorerPart(pp.p.entries[i].Scorer) {
		case partOther:
			return false
		case partRequests:
			if _, norm := ps.(Normalizer); norm {
				return false
			}
		}
	}
	return true
}

// AddPlainPart is scoring.PodProfile's.
func (pp *podProfile) AddPlainPart(nodes []*snapshot.NodeInfo, totals []int64, requests bool) error {
	if requests {
		// The fused pair is of request-only scorers.
		return pp.addPlain(nodes, totals, pp.fused, partRequests)
	}
	return pp.addPlain(nodes, totals, false, partNode)
}

// accumulate adds weight × scores[j] to tot[off+j], checking the range: the
// loop keeps the largest score seen as unsigned (a negative score is huge)
// with a branch-free max and looks for the culprit only when it is out of
// range.
func (p *Profile) accumulate(i int, nodes []*snapshot.NodeInfo, off int, scores []int64, tot []int64) error {
	w := p.entries[i].Weight
	t := tot[off : off+len(scores)]
	t = t[:len(scores)]
	var hi uint64
	if w == 1 {
		for j, s := range scores {
			hi = max(hi, uint64(s))
			t[j] += s
		}
	} else {
		for j, s := range scores {
			hi = max(hi, uint64(s))
			t[j] += s * w
		}
	}
	if hi > uint64(MaxScore) {
		for j, s := range scores {
			if uint64(s) > uint64(MaxScore) {
				return p.outOfRange(i, nodes[off+j], s)
			}
		}
	}
	return nil
}

func (p *Profile) outOfRange(i int, node *snapshot.NodeInfo, s int64) error {
	return fmt.Errorf("score: scorer %q gave node %s the score %d, want [%d, %d] after normalising: %w",
		p.entries[i].Scorer.Name(), node.Name(), s, MinScore, MaxScore, ErrScoreOutOfRange)
}

// ScorerScore is one row of an [Explanation]: what one scorer gave the
// node.
type ScorerScore struct {
	// Scorer is the scorer's name.
	Scorer string
	// Skipped reports that the scorer skipped the pod (Prepare returned
	// nil); the other numbers are then 0.
	Skipped bool
	// Raw is the score before normalising (equal to Normalized for a
	// scorer that does not normalise).
	Raw int64
	// Normalized is the final score in [MinScore, MaxScore].
	Normalized int64
	// Weight is the scorer's weight in the profile.
	Weight int64
	// Contribution is Weight × Normalized, the scorer's share of Total.
	Contribution int64
	// Detail is the scorer's own account of the raw score (from
	// [Explainer]), or "".
	Detail string
}

// Explanation says why a node got its total: one row per scorer, in
// profile order.
type Explanation struct {
	// Node is the node's name.
	Node string
	// Total is the node's weighted total, as Profile.Score computes it.
	Total int64
	// Scores has one row per scorer of the profile.
	Scores []ScorerScore
}

// Explain scores pod against the candidates like [Profile.Score] and
// returns the breakdown for nodes[node]: each scorer's raw score,
// normalised score, weight and contribution. Normalising scorers see all
// candidates, so the answer is the one Score gives in the same cycle.
// Errors are those of Score, plus an index out of range. For "why did it
// go there?", not for the hot path: O(scorers × len(nodes)) and it
// allocates.
func (p *Profile) Explain(pod *snapshot.PodInfo, cluster Cluster, nodes []*snapshot.NodeInfo, node int) (*Explanation, error) {
	if pod == nil {
		return nil, fmt.Errorf("score: Profile.Explain: pod is nil: %w", ErrInvalidPod)
	}
	if node < 0 || node >= len(nodes) {
		return nil, fmt.Errorf("score: Profile.Explain: pod %s: node index %d out of range [0, %d)", pod.Key(), node, len(nodes))
	}
	for i, ni := range nodes {
		if ni == nil {
			return nil, fmt.Errorf("score: Profile.Explain: pod %s: nodes[%d] is nil: %w", pod.Key(), i, ErrInvalidConfig)
		}
	}
	ps := make([]PodScorer, len(p.entries))
	if err := p.prepare(pod, cluster, ps, false); err != nil {
		return nil, err
	}
	// The prepared scorers are Explain's alone: their pooled storage
	// (InterPodAffinity's tables) goes back once the rows are built.
	defer releaseScorers(ps)
	target := nodes[node]
	e := &Explanation{Node: target.Name(), Scores: make([]ScorerScore, len(p.entries))}
	for i, s := range ps {
		row := ScorerScore{Scorer: p.entries[i].Scorer.Name(), Weight: p.entries[i].Weight}
		if s == nil {
			row.Skipped = true
			e.Scores[i] = row
			continue
		}
		if nz, ok := s.(Normalizer); ok {
			all := make([]int64, len(nodes))
			s.Score(nodes, all)
			row.Raw = all[node]
			if err := nz.Normalize(nodes, all); err != nil {
				return nil, fmt.Errorf("score: scorer %q: normalising for pod %s: %w", row.Scorer, pod.Key(), err)
			}
			row.Normalized = all[node]
		} else {
			var one [1]int64
			s.Score(nodes[node:node+1], one[:])
			row.Raw, row.Normalized = one[0], one[0]
		}
		if uint64(row.Normalized) > uint64(MaxScore) {
			return nil, p.outOfRange(i, target, row.Normalized)
		}
		if x, ok := s.(Explainer); ok {
			row.Detail = x.Explain(target)
		}
		row.Contribution = row.Weight * row.Normalized
		e.Total += row.Contribution
		e.Scores[i] = row
	}
	return e, nil
}

// String formats the explanation as a table, one line per scorer:
//
//	node n1: total 376
//	SCORER                           RAW  NORMALIZED  WEIGHT  CONTRIBUTION  DETAIL
//	NodeResourcesFit                  75          75       1            75  cpu ...
//
// Skipped scorers show "skipped" in place of the numbers.
func (e *Explanation) String() string {
	nameW := len("SCORER")
	for _, r := range e.Scores {
		nameW = max(nameW, len(r.Scorer))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "node %s: total %d\n", e.Node, e.Total)
	line := func(name, raw, norm, weight, contrib, detail string) {
		s := fmt.Sprintf("%-*s  %5s  %10s  %6s  %12s  %s", nameW, name, raw, norm, weight, contrib, detail)
		b.WriteString(strings.TrimRight(s, " "))
		b.WriteByte('\n')
	}
	line("SCORER", "RAW", "NORMALIZED", "WEIGHT", "CONTRIBUTION", "DETAIL")
	for _, r := range e.Scores {
		if r.Skipped {
			line(r.Scorer, "-", "-", fmt.Sprint(r.Weight), "0", "skipped")
			continue
		}
		line(r.Scorer, fmt.Sprint(r.Raw), fmt.Sprint(r.Normalized), fmt.Sprint(r.Weight), fmt.Sprint(r.Contribution), r.Detail)
	}
	return b.String()
}
