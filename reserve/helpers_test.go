package reserve_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/reserve"
)

func export(t testing.TB, l *reserve.Ledger) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, l.Export(&b))
	return b.String()
}
