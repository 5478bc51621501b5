package interpod

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"
)

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
		for _, h := range hosts {
			require.Equal(t, loop.Check(h, nil), f.Check(h, nil), "seed %d host %v", seed, h)
		}
	}
}
