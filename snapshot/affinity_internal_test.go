package snapshot

import (
	"fmt"
	"testing"
	"unique"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/internal/interpod"
)

// TestTermGroupAddToDeepTrie: AddTo walks every entry of a trie several
// levels deep (thousands of values: leaves split), as Each and Count see
// them, multiplied.
func TestTermGroupAddToDeepTrie(t *testing.T) {
	var g termGroup
	w := pwriter[unique.Handle[string], int64]{tok: 1}
	for i := range 3000 {
		v := unique.Make(fmt.Sprint("node-", i))
		g.add(w, v, int64(i%7+1))
	}
	require.Equal(t, 3000, g.Len())
	var tab interpod.ValueTable
	g.AddTo(&tab, -3)
	require.Equal(t, 3000, tab.Len())
	seen := 0
	g.Each(func(v unique.Handle[string], n int64) bool {
		seen++
		require.Equal(t, g.Count(v), n)
		require.Equal(t, -3*n, tab.Get(v), v.Value())
		return true
	})
	require.Equal(t, 3000, seen)
}
