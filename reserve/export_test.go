package reserve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/reserve"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// signedExport wraps a state object the way Export does (format version
// 2), computing the checksum independently of the package.
func signedExport(state string) string {
	sum := crc32.Checksum([]byte(state), crc32.MakeTable(crc32.Castagnoli))
	return fmt.Sprintf(`{"version":2,"crc32c":"%08x","state":%s}`+"\n", sum, state)
}

// exportedState returns the state object of an export.
func exportedState(t testing.TB, doc string) string {
	t.Helper()
	i := strings.Index(doc, `"state":`)
	require.GreaterOrEqual(t, i, 0)
	return strings.TrimSuffix(strings.TrimSpace(doc[i+len(`"state":`):]), "}")
}

// dupFirst returns state with the first element of its list called list
// repeated.
func dupFirst(t testing.TB, state, list string) string {
	t.Helper()
	i := strings.Index(state, `"`+list+`":[{`)
	require.GreaterOrEqual(t, i, 0, "no %s in %s", list, state)
	i += len(list) + 4
	depth, j := 0, i
	for ; j < len(state); j++ {
		if state[j] == '{' {
			depth++
		} else if state[j] == '}' {
			depth--
			if depth == 0 {
				break
			}
		}
	}
	return state[:i] + state[i:j+1] + "," + state[i:]
}

// listOf returns the JSON array called list in state.
func listOf(t testing.TB, state, list string) string {
	t.Helper()
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(state), &doc))
	return string(doc[list])
}

// dupLedger has a node, a bound pod, a held pod, a reservation and a
// bound pod's share of it.
func dupLedger(t *testing.T) *reserve.Ledger {
	l := newLedger(t, node("n1", "8"), node("n2", "8"))
	_, err := l.AddReservation(reserve.Reservation{Name: "r", Node: "n1", Capacity: st.List("cpu", "2"),
		Owner: reserve.Owner{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}})
	require.NoError(t, err)
	web := st.MakePod("web").Req("cpu", "1").Label("app", "web").Obj()
	mustReserve(t, l, web, "n1", time.Time{})
	web.Spec.NodeName = "n1"
	require.NoError(t, l.AddPod(web)) // bound, drawing on r
	mustReserve(t, l, st.MakePod("held").Req("cpu", "1").Obj(), "n2", time.Time{})
	return l
}

// TestImportDuplicates: a node, a pod (bound twice, held twice, held and
// bound, two shares) or a reservation listed twice is rejected with
// ErrDuplicate naming it and both places, as snapshot/load rejects
// duplicates; before, Import kept the last one.
func TestImportDuplicates(t *testing.T) {
	l := dupLedger(t)
	state := exportedState(t, export(t, l))
	_, err := reserve.Import(strings.NewReader(signedExport(state)))
	require.NoError(t, err, "the undamaged state")
	held := listOf(t, state, "holds")
	var hs []struct {
		Pod json.RawMessage `json:"pod"`
	}
	require.NoError(t, json.Unmarshal([]byte(held), &hs))
	boundToo := strings.Replace(string(hs[0].Pod), `"spec":{`, `"spec":{"nodeName":"n2",`, 1)
	for _, tc := range []struct{ name, state, want string }{
		{"node", dupFirst(t, state, "nodes"), `nodes[1]: node "n1", also nodes[0]`},
		{"bound pod", dupFirst(t, state, "pods"), "pods[1]: pod default/web, also pods[0]"},
		{"reservation", dupFirst(t, state, "reservations"), `reservations[1]: reservation "r", also reservations[0]`},
		{"hold", dupFirst(t, state, "holds"), "holds[1]: pod default/held, also holds[0]"},
		{"share", dupFirst(t, state, "draws"), "draws[1]: pod default/web, also draws[0]"},
		{"held and bound", strings.Replace(state, `"pods":[`, `"pods":[`+boundToo+",", 1), "holds[0]: pod default/held, also pods[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reserve.Import(strings.NewReader(signedExport(tc.state)))
			require.ErrorIs(t, err, reserve.ErrDuplicate)
			assert.Contains(t, err.Error(), tc.want)
			t.Log(err)
		})
	}
}

// TestExportEveryTruncationAndBitFlip cuts an export at every byte and
// flips every bit of it, one at a time: Import either rejects the document
// or imports exactly the exported state. Before the checksum, damaged
// exports were accepted as other states.
func TestExportEveryTruncationAndBitFlip(t *testing.T) {
	l := dupLedger(t)
	rj := bigJournal(t, 6, 25) // more holds, shares and reservations
	var b bytes.Buffer
	require.NoError(t, rj.final.Export(&b))
	for _, doc := range []string{export(t, l), b.String()} {
		var cuts, flips, rejected, same, different int
		check := func(data []byte, what string) {
			imp, err := reserve.Import(bytes.NewReader(data))
			if err != nil {
				rejected++
				return
			}
			if export(t, imp) == doc {
				same++
				return
			}
			different++
			t.Errorf("%s: imported a different state", what)
		}
		for cut := range len(doc) {
			cuts++
			check([]byte(doc[:cut]), fmt.Sprintf("cut at %d", cut))
		}
		for off := range len(doc) {
			for bit := range 8 {
				flips++
				data := []byte(doc)
				data[off] ^= 1 << bit
				check(data, fmt.Sprintf("flip at %d.%d", off, bit))
			}
		}
		t.Logf("export of %d bytes: %d truncations and %d single-bit flips: %d rejected, %d imported the same state, %d a different state",
			len(doc), cuts, flips, rejected, same, different)
		require.Zero(t, different)
	}
}

// FuzzImport feeds arbitrary documents to Import: it never panics; what it
// accepts exports and imports again to the same bytes, and a document
// whose state is an export's state imports to exactly that export.
func FuzzImport(f *testing.F) {
	var seeds []string
	add := func(doc string) {
		seeds = append(seeds, doc)
		f.Add([]byte(doc))
	}
	empty := reserve.New()
	var b bytes.Buffer
	require.NoError(f, empty.Export(&b))
	add(b.String())
	rj := bigJournal(f, 7, 12)
	b.Reset()
	require.NoError(f, rj.final.Export(&b))
	add(b.String())
	doc := b.String()
	f.Add([]byte(doc[:len(doc)/2]))
	f.Add([]byte(`{"version":1,"nodes":[],"pods":[]}`))
	f.Add([]byte(signedExport(`{"nodes":[{"metadata":{"name":"n"}},{"metadata":{"name":"n"}}]}`)))
	flipped := []byte(doc)
	flipped[len(flipped)/3] ^= 0x04
	f.Add(flipped)
	refs := map[string]string{} // state bytes -> export
	for _, s := range seeds {
		refs[exportedState(f, s)] = s
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := reserve.Import(bytes.NewReader(data))
		if err != nil {
			return
		}
		got := export(t, l)
		again, err := reserve.Import(strings.NewReader(got))
		require.NoError(t, err)
		require.Equal(t, got, export(t, again))
		var env struct {
			State json.RawMessage `json:"state"`
		}
		require.NoError(t, json.Unmarshal(data, &env))
		if want, ok := refs[string(env.State)]; ok {
			require.Equal(t, want, got, "a seed's state imported as another state")
		}
	})
}
