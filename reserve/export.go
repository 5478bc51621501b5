package reserve

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"

	v1 "k8s.io/api/core/v1"
)

// exportVersion is the version of the Export format.
const exportVersion = 1

// state is the Export format.
type state struct {
	Version      int           `json:"version"`
	Nodes        []*v1.Node    `json:"nodes"`
	Pods         []*v1.Pod     `json:"pods"`
	Reservations []Reservation `json:"reservations"`
	Holds        []holdJSON    `json:"holds"`
	Draws        []*drawJSON   `json:"draws"`
	Lapsed       []lapseJSON   `json:"lapsed,omitempty"`
}

// Export writes the whole state of the ledger as one JSON object: the nodes
// and bound pods the informer reported, named reservations, holds and
// confirmations (with their pods, deadlines and shares), the shares of
// bound pods and lapsed shares (see [Ledger.AddPod]). Everything is sorted (nodes and reservations by name, pods by
// namespace and name), so two ledgers in the same state export the same
// bytes. The journal is not part of the state. O(nodes + pods); allocates
// the encoding. Errors come from w.
func (l *Ledger) Export(w io.Writer) error {
	l.mu.Lock()
	st := state{Version: exportVersion, Nodes: []*v1.Node{}, Pods: []*v1.Pod{}, Reservations: []Reservation{}}
	for _, name := range l.nodeIdx.sortedNames(l.nodes) {
		if i, _ := l.nodeIndex(name); l.nodes[i].present {
			st.Nodes = append(st.Nodes, l.nodes[i].node)
		}
	}
	var bound []int32
	for i := range l.recs {
		if l.recs[i].phase == Bound {
			bound = append(bound, int32(i))
		}
	}
	slices.SortFunc(bound, func(a, b int32) int { return cmpKey(l.recs[a].key, l.recs[b].key) })
	for _, i := range bound {
		st.Pods = append(st.Pods, l.recs[i].pi.Pod())
	}
	for _, name := range sortedKeys(l.res) {
		st.Reservations = append(st.Reservations, l.res[name].spec)
	}
	st.Holds = l.holdsJSON()
	st.Draws = l.boundDrawsJSON()
	if st.Draws == nil {
		st.Draws = []*drawJSON{}
	}
	st.Lapsed = l.lapsedJSON()
	l.mu.Unlock()
	enc := json.NewEncoder(w)
	return enc.Encode(&st)
}

// Import reads what [Ledger.Export] wrote and returns a ledger in that
// state (without a journal). Errors: malformed JSON or objects
// ([ErrInvalid], naming the object and field), a hold or share that
// contradicts the rest ([ErrCorruptJournal]). O(size of the input).
func Import(r io.Reader) (*Ledger, error) {
	if r == nil {
		return nil, fmt.Errorf("Import: reader is nil: %w", ErrInvalid)
	}
	var st state
	dec := json.NewDecoder(r)
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("Import: %w: %w", ErrInvalid, err)
	}
	if st.Version != exportVersion {
		return nil, fmt.Errorf("Import: version %d, want %d: %w", st.Version, exportVersion, ErrInvalid)
	}
	l := New()
	for i, n := range st.Nodes {
		if err := l.AddNode(n); err != nil {
			return nil, fmt.Errorf("Import: nodes[%d]: %w: %w", i, ErrInvalid, err)
		}
	}
	for i, p := range st.Pods {
		if p == nil || p.Spec.NodeName == "" {
			return nil, fmt.Errorf("Import: pods[%d]: not a bound pod: %w", i, ErrInvalid)
		}
		if err := l.AddPod(p); err != nil {
			return nil, fmt.Errorf("Import: pods[%d]: %w: %w", i, ErrInvalid, err)
		}
	}
	recs := []decoded{{record: record{Op: opBegin}}}
	for i := range st.Reservations {
		res, err := parseReservation(st.Reservations[i])
		if err != nil {
			return nil, fmt.Errorf("Import: reservations[%d]: %w", i, err)
		}
		recs = append(recs, decoded{record: record{Op: opReservation}, res: res})
	}
	if len(st.Holds) > 0 {
		d := decoded{record: record{Op: opHold}}
		for i := range st.Holds {
			h, err := decodeHold(&st.Holds[i])
			if err != nil {
				return nil, fmt.Errorf("Import: holds[%d]: %w: %w", i, ErrInvalid, err)
			}
			d.holds = append(d.holds, h)
		}
		recs = append(recs, d)
	}
	for i, dj := range st.Draws {
		if dj == nil || dj.Pod.Name == "" || dj.Reservation == "" {
			return nil, fmt.Errorf("Import: draws[%d]: pod or reservation missing: %w", i, ErrInvalid)
		}
		v, err := parseVectorJSON(dj.Drawn)
		if err != nil {
			return nil, fmt.Errorf("Import: draws[%d]: %w: %w", i, ErrInvalid, err)
		}
		recs = append(recs, decoded{record: record{Op: opDraw, Draw: dj}, drawn: v})
	}
	for i, lj := range st.Lapsed {
		if lj.Pod.Name == "" || lj.Reservation == "" {
			return nil, fmt.Errorf("Import: lapsed[%d]: pod or reservation missing: %w", i, ErrInvalid)
		}
		recs = append(recs, decoded{record: record{Op: opLapse, Pods: []keyJSON{lj.Pod}, Name: lj.Reservation}})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range recs {
		if err := l.applyRecord(&recs[i]); err != nil {
			return nil, fmt.Errorf("Import: %w: %w", ErrCorruptJournal, err)
		}
	}
	l.settleReplayed()
	return l, nil
}
