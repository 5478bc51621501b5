package interpod

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"
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
