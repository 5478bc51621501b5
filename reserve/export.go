package reserve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
	"strconv"

	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// exportVersion is the version of the Export format. Version 1 (the state
// object alone, with a "version" field and no checksum) is not read.
const exportVersion = 2

// state is the content of an export.
type state struct {
	Nodes        []*v1.Node    `json:"nodes"`
	Pods         []*v1.Pod     `json:"pods"`
	Reservations []Reservation `json:"reservations"`
	Holds        []holdJSON    `json:"holds"`
	Draws        []*drawJSON   `json:"draws"`
	Lapsed       []lapseJSON   `json:"lapsed,omitempty"`
}

// envelope is the Export format: the state, and the CRC-32C of its bytes
// exactly as they appear in the document.
type envelope struct {
	Version int             `json:"version"`
	CRC32C  string          `json:"crc32c"`
	State   json.RawMessage `json:"state"`
}

// Export writes the whole state of the ledger as one JSON document:
//
//	{"version":2,"crc32c":"<8 hex digits>","state":{"nodes":[...],"pods":[...],
//	 "reservations":[...],"holds":[...],"draws":[...],"lapsed":[...]}}
//
// ("lapsed" is left out when empty)
//
// where crc32c is the CRC-32C (Castagnoli) of the bytes of the state
// object as written, and the state holds the nodes and bound pods the
// informer reported, named reservations, holds and confirmations (with
// their pods, deadlines and shares), the shares of bound pods and lapsed
// shares (see [Ledger.AddPod]).
// Everything is sorted (nodes and reservations by name, pods by namespace
// and name), so two ledgers in the same state export the same bytes. The
// journal is not part of the state. O(nodes + pods); allocates the
// encoding. Errors start "reserve: Ledger.Export: " and wrap w's error
// (errors.Is reaches it), or wrap [ErrInvalid] when the ledger
// holds a lean record ([WithLeanPods]), whose pod object it cannot write.
func (l *Ledger) Export(w io.Writer) (err error) {
	defer named("Export", &err)
	l.mu.Lock()
	if err := l.leanRecord(); err != nil {
		l.mu.Unlock()
		return err
	}
	st := state{Nodes: []*v1.Node{}, Pods: []*v1.Pod{}, Reservations: []Reservation{}}
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
	body, err := json.Marshal(&st)
	if err != nil {
		return err
	}
	doc := fmt.Appendf(nil, `{"version":%d,"crc32c":"%08x","state":`, exportVersion, crc32.Checksum(body, castagnoli))
	doc = append(append(doc, body...), "}\n"...)
	if _, err := w.Write(doc); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}

// Import reads what [Ledger.Export] wrote and returns a ledger in that
// state (without a journal), made with opts (give the exporting ledger's
// [WithDeviceDecoder]: the document holds objects, which are decoded
// again). The document must be whole and unaltered:
// its checksum is verified before anything is decoded. Errors start
// "reserve: Import: " (the ledger is not returned): a read error of r
// (wrapped); a document that is not one complete JSON object, has
// neither version nor checksum (such as "{}"), has no checksum or a checksum that does not match its state
// ([ErrCorruptExport]: truncated or altered); another version or malformed
// objects ([ErrInvalid], naming the object and field); a node, pod (bound,
// held or drawing on a reservation) or reservation listed twice
// ([ErrDuplicate], naming it and both places); a hold or share that
// contradicts the rest ([ErrInvalid]). O(size of the input); reads all of
// r.
func Import(r io.Reader, opts ...Option) (*Ledger, error) {
	if r == nil {
		return nil, fmt.Errorf("reserve: Import: reader is nil: %w", ErrInvalid)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("reserve: Import: read: %w", err)
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("reserve: Import: not one complete JSON document (truncated?): %w: %w", ErrCorruptExport, err)
	}
	if env.Version == 0 && env.CRC32C == "" {
		return nil, fmt.Errorf("reserve: Import: no version and no crc32c: not an Export document (or altered): %w", ErrCorruptExport)
	}
	if env.Version != exportVersion {
		if env.Version == 1 && env.CRC32C == "" {
			return nil, fmt.Errorf("reserve: Import: version 1 (no checksum) is not read by this version; export again: %w", ErrInvalid)
		}
		return nil, fmt.Errorf("reserve: Import: version %d, want %d: %w", env.Version, exportVersion, ErrInvalid)
	}
	want, err := strconv.ParseUint(env.CRC32C, 16, 32)
	if err != nil || len(env.CRC32C) != 8 {
		return nil, fmt.Errorf("reserve: Import: crc32c %q is not 8 hex digits: %w", env.CRC32C, ErrCorruptExport)
	}
	if got := crc32.Checksum(env.State, castagnoli); uint32(want) != got {
		return nil, fmt.Errorf("reserve: Import: checksum mismatch: the document says %08x, its state has %08x (truncated or altered): %w", want, got, ErrCorruptExport)
	}
	var st state
	dec := json.NewDecoder(bytes.NewReader(env.State))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("reserve: Import: state: %w: %w", ErrInvalid, err)
	}
	l := New(opts...)
	nodes := map[string]int{}
	for i, n := range st.Nodes {
		if n != nil {
			if j, dup := nodes[n.Name]; dup {
				return nil, fmt.Errorf("reserve: Import: nodes[%d]: node %q, also nodes[%d]: %w", i, n.Name, j, ErrDuplicate)
			}
			nodes[n.Name] = i
		}
		if err := l.AddNode(n); err != nil {
			return nil, fmt.Errorf("reserve: Import: nodes[%d]: %w: %w", i, ErrInvalid, err)
		}
	}
	pods := map[snapshot.PodKey]string{}
	for i, p := range st.Pods {
		if p == nil || p.Spec.NodeName == "" {
			return nil, fmt.Errorf("reserve: Import: pods[%d]: not a bound pod: %w", i, ErrInvalid)
		}
		k := snapshot.KeyOf(p)
		if at, dup := pods[k]; dup {
			return nil, fmt.Errorf("reserve: Import: pods[%d]: pod %s, also %s: %w", i, k, at, ErrDuplicate)
		}
		pods[k] = fmt.Sprintf("pods[%d]", i)
		if err := l.AddPod(p); err != nil {
			return nil, fmt.Errorf("reserve: Import: pods[%d]: %w: %w", i, ErrInvalid, err)
		}
	}
	d := decoded{record: record{Op: opBegin, Reservations: st.Reservations, Holds: st.Holds, Draws: st.Draws, Lapsed: st.Lapsed}, dec: l.view.DeviceDecoder()}
	if err := d.decodeImage(); err != nil {
		return nil, fmt.Errorf("reserve: Import: %w: %w", ErrInvalid, err)
	}
	if err := importDuplicates(&d, pods); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.applyImage(&d); err != nil {
		return nil, fmt.Errorf("reserve: Import: %w: %w", ErrInvalid, err)
	}
	l.settleReplayed()
	return l, nil
}

// importDuplicates rejects a reservation listed twice, and a pod held
// twice, held and bound, or with two shares (a held pod's share is in its
// hold; a bound pod's in draws).
func importDuplicates(d *decoded, pods map[snapshot.PodKey]string) error {
	names := map[string]int{}
	for i, r := range d.image {
		if j, dup := names[r.spec.Name]; dup {
			return fmt.Errorf("reserve: Import: reservations[%d]: reservation %q, also reservations[%d]: %w", i, r.spec.Name, j, ErrDuplicate)
		}
		names[r.spec.Name] = i
	}
	held := map[snapshot.PodKey]string{}
	for i := range d.holds {
		k := d.holds[i].pi.Key()
		at, dup := held[k]
		if !dup {
			at, dup = pods[k]
		}
		if dup {
			return fmt.Errorf("reserve: Import: holds[%d]: pod %s, also %s: %w", i, k, at, ErrDuplicate)
		}
		held[k] = fmt.Sprintf("holds[%d]", i)
	}
	drawn := map[snapshot.PodKey]string{}
	for i, dr := range d.draws {
		at, dup := drawn[dr.pod]
		if !dup {
			at, dup = held[dr.pod]
		}
		if dup {
			return fmt.Errorf("reserve: Import: draws[%d]: pod %s, also %s: %w", i, dr.pod, at, ErrDuplicate)
		}
		drawn[dr.pod] = fmt.Sprintf("draws[%d]", i)
	}
	lapsed := map[snapshot.PodKey]int{}
	for i := range d.Lapsed {
		k := d.Lapsed[i].Pod.key()
		if j, dup := lapsed[k]; dup {
			return fmt.Errorf("reserve: Import: lapsed[%d]: pod %s, also lapsed[%d]: %w", i, k, j, ErrDuplicate)
		}
		if at, dup := drawn[k]; dup {
			return fmt.Errorf("reserve: Import: lapsed[%d]: pod %s, also %s: %w", i, k, at, ErrDuplicate)
		}
		lapsed[k] = i
	}
	return nil
}
