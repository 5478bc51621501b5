package quantity

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestScreen(t *testing.T) {
	for _, c := range []struct {
		s      string
		reject bool
	}{
		// Ordinary quantities and what apimachinery refuses quickly.
		{"", false}, {"0", false}, {"100m", false}, {"1.5Gi", false}, {"1e3", false}, {"5E-3", false},
		{"two", false}, {"1e", false}, {"1e+-5", false}, {"1e99999999999999999999", false}, {"e-999999999", false},
		// A positive exponent on at most 18 digits: an int64 with an
		// exponent, parsed at once.
		{"1e999999999", false}, {"123456789012345678e2147483647", false}, {"0.5e999999999", false},
		// Zero, whatever the exponent.
		{"0e-999999999", false}, {"-0.000e-2147483648", false}, {"0e9919999199999999", false},
		// The bounds.
		{"1e-10000", false}, {"1e-10001", true}, {"1e-0000010001", true},
		{"1234567890123456789e10000", false}, {"1234567890123456789e10001", true}, {"123456789012345678e10001", false},
		{"0.000000000000000001e10001", true},
		// The hangs and the truncation.
		{"1e-999999999", true}, {" -1E-999999999 ", true}, {"1e-100000", true}, {"+7.5e-2147483648", true},
		{"1e2147483648", true}, {"1e4294967297", true}, {"1e9919999199999999", true}, {"1e-9919999199999999", true},
	} {
		err := Screen(c.s)
		if c.reject {
			require.Error(t, err, "Screen(%q)", c.s)
			assert.True(t, errors.Is(err, ErrExponent), "Screen(%q) = %v, want ErrExponent", c.s, err)
			assert.Contains(t, err.Error(), c.s, "the error quotes the string")
		} else {
			assert.NoError(t, err, "Screen(%q)", c.s)
		}
	}
}

// Why an exponent beyond int32 is refused even when it parses quickly.
func TestScreenTruncationIsReal(t *testing.T) {
	q, err := resource.ParseQuantity("1e4294967297") // 2^32 + 1
	require.NoError(t, err)
	assert.Equal(t, int64(10), q.Value(), "apimachinery truncates the exponent to 32 bits: 1e(2^32+1) is 10")
}

// What Screen lets through at its bounds parses, and prints, at once. A
// deadline, not a timing: past the bounds these take seconds to minutes.
func TestScreenedParsesReturn(t *testing.T) {
	in := []string{"1e-10000", "-1e-10000", "1234567890123456789e10000", "-1234567890123456789.5e10000", "123456789012345678e2147483647", "0e-2147483648"}
	done := make(chan error, 1)
	go func() {
		for _, s := range in {
			if err := Screen(s); err != nil {
				done <- err
				return
			}
			q, err := resource.ParseQuantity(s)
			if err != nil {
				done <- err
				return
			}
			_ = q.String()
			_, _ = Scaled(q, resource.Milli)
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("quantities Screen accepts did not parse within 20s")
	}
}
