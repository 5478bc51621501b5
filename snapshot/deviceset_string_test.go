package snapshot_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot"
)

// TestDeviceSetString: a DeviceSet had no String method and printed as a
// raw bit mask ("37") (trial 5); it now lists its indexes.
func TestDeviceSetString(t *testing.T) {
	for _, tc := range []struct {
		set  snapshot.DeviceSet
		want string
	}{
		{0, "{}"},
		{snapshot.DeviceSet(0).With(0), "{0}"},
		{snapshot.DeviceSet(0).With(5).With(0).With(2), "{0,2,5}"},
		{snapshot.DeviceSet(0).With(63).With(10), "{10,63}"},
		{snapshot.DeviceSet(0).With(1).With(64), "{1}"}, // 64 is outside [0, MaxDevices): ignored
	} {
		require.Equal(t, tc.want, tc.set.String())
		require.Equal(t, "devices "+tc.want, fmt.Sprintf("devices %v", tc.set))
	}
}
