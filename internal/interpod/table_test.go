package interpod

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/internal/layout"
)

// TestValueTableMatchesMap: Add and Get (present values, absent ones, the
// zero table) agree with a Go map through growth and through reserve,
// over random sequences; absent look-ups are where the seen bits answer
// alone, so a bit not set on insert or on growth fails here.
func TestValueTableMatchesMap(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 3))
		var tab ValueTable
		want := map[unique.Handle[string]]int64{}
		universe := make([]unique.Handle[string], 1+r.IntN(600))
		for i := range universe {
			universe[i] = unique.Make(fmt.Sprint("v", seed, "-", i))
		}
		require.Zero(t, tab.Get(universe[0]), "seed %d: zero table", seed)
		if r.IntN(2) == 0 {
			tab.reserve(r.IntN(len(universe)))
		}
		for step := range 4 * len(universe) {
			v := universe[r.IntN(len(universe))]
			if r.IntN(2) == 0 {
				n := int64(r.IntN(5))
				tab.Add(v, n)
				want[v] += n
			}
			if step%97 == 0 {
				for _, u := range universe {
					require.Equal(t, want[u], tab.Get(u), "seed %d step %d value %s", seed, step, u.Value())
				}
			}
		}
		require.Equal(t, len(want), tab.Len(), "seed %d", seed)
	}
}

// TestHostOneCheckMatchesLoop: a filter whose only table is the
// hostname key's (Filter.host1) gives, for every node hostname (absent
// from the table, with matching pods only, existing terms only, both,
// none at all), the verdict of Check's general loop over byKey.
func TestHostOneCheckMatchesLoop(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 7))
		f := &Filter{}
		tab := tableFor(&f.byKey, hostnameKey)
		var hosts []unique.Handle[string]
		for i := range 1 + r.IntN(40) {
			v := unique.Make(fmt.Sprint("host-", seed, "-", i))
			hosts = append(hosts, v)
			if r.IntN(3) > 0 {
				// matching pods × antiUnit + existing groups' total
				tab.Add(v, int64(r.IntN(3))*antiUnit+int64(r.IntN(3)))
			}
		}
		hosts = append(hosts, unique.Handle[string]{})
		f.setNeedsLabels()
		require.NotNil(t, f.host1, "seed %d", seed)
		require.False(t, f.NeedsLabels())
		loop := *f
		loop.host1 = nil
		for _, v := range hosts {
			var h layout.Head
			h.CPUMemory.Hostname = v
			require.Equal(t, loop.Check(&h, nil), f.Check(&h, nil), "seed %d host %v", seed, v)
		}
	}
}
