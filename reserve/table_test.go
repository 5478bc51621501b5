package reserve

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

// TestPodTableMatchesMap drives the open-addressing table and a Go map with
// the same random inserts and removes — with hashes forced into few home
// slots and few tags, so probe runs wrap around the table, collide on tags
// and exercise backward-shift deletion — and compares every look-up.
func TestPodTableMatchesMap(t *testing.T) {
	for _, mode := range []string{"real hashes", "colliding hashes"} {
		t.Run(mode, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 9))
			var tab podTable
			var recs []podRec
			ref := map[snapshot.PodKey]int32{}
			hashOf := func(k snapshot.PodKey) uint64 {
				h := k.Hash()
				if mode == "colliding hashes" {
					// 4 tags × home slots among the last 8 of any table
					// up to 2^20 slots: runs wrap around, tags collide,
					// and 32 hashes serve 300 keys (equal full hashes).
					h = uint64(rng.IntN(4))<<57 | uint64(1<<20-8+rng.IntN(8))
				}
				return h
			}
			hashes := map[snapshot.PodKey]uint64{}
			for step := range 200_000 {
				k := snapshot.PodKey{Namespace: "ns", Name: fmt.Sprint(rng.IntN(300))}
				h, ok := hashes[k]
				if !ok {
					h = hashOf(k)
					hashes[k] = h
				}
				idx, found := tab.get(h, k, recs)
				want, inRef := ref[k]
				require.Equal(t, inRef, found, "step %d: get(%s) found", step, k)
				if found {
					require.Equal(t, want, idx, "step %d: get(%s)", step, k)
					if rng.IntN(2) == 0 {
						tab.remove(h, idx)
						delete(ref, k)
					}
				} else {
					i := int32(len(recs))
					recs = append(recs, podRec{key: k, hash: h})
					tab.insert(h, i)
					ref[k] = i
				}
				require.Equal(t, len(ref), tab.len(), "step %d: len", step)
			}
			n := 0
			tab.each(func(idx int32) {
				require.Equal(t, ref[recs[idx].key], idx)
				n++
			})
			require.Equal(t, len(ref), n)
		})
	}
}

// TestPodInfoKeyHash: the ledger stores PodInfo.KeyHash and looks keys up
// with PodKey.Hash, so the two must agree.
func TestPodInfoKeyHash(t *testing.T) {
	key := func(ns, name string) snapshot.PodKey { return snapshot.PodKey{Namespace: ns, Name: name} }
	for _, k := range []snapshot.PodKey{key("", "a"), key("ns", "a"), key("a", "ns"), key("ns/a", "b"), key("ns", "a/b"), key("default", "web-0")} {
		pi := snapshot.MustPodInfo(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}})
		require.Equal(t, k.Hash(), pi.KeyHash(), "%s", k)
	}
	require.NotEqual(t, key("ns", "a").Hash(), key("a", "ns").Hash())
}
