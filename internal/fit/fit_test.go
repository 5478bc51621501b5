package fit

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShort(t *testing.T) {
	for _, c := range []struct {
		name                      string
		request, capacity, used   int64
		short, exceeds, unresolve bool
	}{
		// 1000 <= 4000 − 3000: fits exactly.
		{"fits exactly", 1000, 4000, 3000, false, false, false},
		// 1001 > 4000 − 3000.
		{"one over", 1001, 4000, 3000, true, true, false},
		// 5000 > 4000 whole: no preemption helps.
		{"over capacity", 5000, 4000, 0, true, true, true},
		// Not requested: never short, even on an over-committed node...
		{"zero request", 0, 1000, 2000, false, true, false},
		// ...but a need of 0 exceeds a negative free amount.
		{"negative request", -5, 0, 0, false, false, false},
		// 1 > MaxInt64 − (−1) would wrap to MinInt64 and fail; saturates.
		{"free saturates high", 1, math.MaxInt64, -1, false, false, false},
		// MinInt64 − 1 would wrap to MaxInt64 and fit; saturates.
		{"free saturates low", 1, math.MinInt64, 1, true, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.short, Short(c.request, c.capacity, c.used), "Short(%d, %d, %d)", c.request, c.capacity, c.used)
			assert.Equal(t, c.exceeds, Exceeds(c.request, c.capacity, c.used), "Exceeds(%d, %d, %d)", c.request, c.capacity, c.used)
			assert.Equal(t, c.unresolve, Unresolvable(c.request, c.capacity), "Unresolvable(%d, %d)", c.request, c.capacity)
		})
	}
}

func TestTooManyPods(t *testing.T) {
	assert.False(t, TooManyPods(109, 110), "109 pods + 1 <= 110")
	assert.True(t, TooManyPods(110, 110), "110 pods + 1 > 110")
	assert.True(t, TooManyPods(0, 0), "a node that admits no pod")
	assert.False(t, TooManyPods(math.MaxInt64-1, math.MaxInt64), "MaxInt64−1 pods + 1 <= MaxInt64")
	// pods + 1 would wrap to MinInt64 and "fit".
	assert.True(t, TooManyPods(math.MaxInt64, math.MaxInt64), "MaxInt64 pods + 1 > MaxInt64")
}

// FuzzShort checks the decisions against exact integer arithmetic: no
// amount wraps into "fits".
func FuzzShort(f *testing.F) {
	f.Add(int64(1000), int64(4000), int64(3000))
	f.Add(int64(1), int64(math.MaxInt64), int64(-1))
	f.Add(int64(1), int64(math.MinInt64), int64(1))
	f.Add(int64(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, request, capacity, used int64) {
		free := new(big.Int).Sub(big.NewInt(capacity), big.NewInt(used))
		exceeds := big.NewInt(request).Cmp(free) > 0
		if got := Exceeds(request, capacity, used); got != exceeds {
			t.Fatalf("Exceeds(%d, %d, %d) = %v, want %v", request, capacity, used, got, exceeds)
		}
		if got, want := Short(request, capacity, used), request > 0 && exceeds; got != want {
			t.Fatalf("Short(%d, %d, %d) = %v, want %v", request, capacity, used, got, want)
		}
		if got, want := TooManyPods(used, capacity), big.NewInt(1).Cmp(free) > 0; got != want {
			t.Fatalf("TooManyPods(%d, %d) = %v, want %v", used, capacity, got, want)
		}
	})
}
