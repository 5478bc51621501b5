package selector

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseInt64(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "+5", "0204", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "", "+", "-", "1_000", "1.5", " 1", "0x10", "99999999999999999999"} {
		want, werr := strconv.ParseInt(s, 10, 64)
		gotV, ok := parseInt64(s)
		assert.Equal(t, werr == nil, ok, "parseInt64(%q) ok", s)
		if ok {
			assert.Equal(t, want, gotV, "parseInt64(%q)", s)
		}
	}
}

func FuzzParseInt64(f *testing.F) {
	for _, s := range []string{"0", "-1", "+5", "9223372036854775807", "-9223372036854775808", "9223372036854775808", "", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, werr := strconv.ParseInt(s, 10, 64)
		gotV, ok := parseInt64(s)
		if (werr == nil) != ok || (ok && want != gotV) {
			t.Fatalf("parseInt64(%q) = %d, %v; strconv: %d, %v", s, gotV, ok, want, werr)
		}
	})
}
