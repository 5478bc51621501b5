package reserve_test

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/reserve"
	st "github.com/schedkit/schedkit/snapshot/snapshottest"
)

// TestEntryPointErrors (trial 8): the package promises that every error
// starts with its entry point ("reserve: Ledger.X: " or "reserve:
// Import: ") and wraps a sentinel. Replay said "Replay: record 0 at
// offset 0: ..." and "Replay: 1 holds, ...", Import said "Import: ..."
// and took "{}" (no version, no checksum) for ErrInvalid rather than
// ErrCorruptExport, SetJournal's failed write did not name SetJournal and
// Export returned the writer's error bare. Each names itself once now,
// wraps its sentinel, and a reader's or writer's error stays reachable
// with errors.Is.
func TestEntryPointErrors(t *testing.T) {
	held := func() *reserve.Ledger {
		l := reserve.New()
		require.NoError(t, l.AddNode(st.MakeNode("n1").Capacity("cpu", "4", "memory", "8Gi", "pods", "110").Obj()))
		mustReserve(t, l, st.MakePod("x").Req("cpu", "1").Obj(), "n1", time.Time{})
		return l
	}
	var journal bytes.Buffer
	require.NoError(t, held().SetJournal(&journal))
	corrupt := bytes.Clone(journal.Bytes())
	corrupt[len(corrupt)/2] ^= 0xff // a whole record whose checksum does not match

	for _, tc := range []struct {
		name, prefix string
		call         func() error
		is           []error
	}{
		{"Replay corrupt", "reserve: Ledger.Replay: record 0 at offset 0: ", func() error {
			_, err := reserve.New().Replay(bytes.NewReader(corrupt))
			return err
		}, []error{reserve.ErrCorruptJournal}},
		{"Replay not empty", "reserve: Ledger.Replay: 1 holds, ", func() error {
			_, err := held().Replay(bytes.NewReader(journal.Bytes()))
			return err
		}, []error{reserve.ErrNotEmpty}},
		{"Replay read", "reserve: Ledger.Replay: read at offset 0: ", func() error {
			_, err := reserve.New().Replay(iotest.ErrReader(errDisk))
			return err
		}, []error{errDisk}},
		{"Import {}", "reserve: Import: ", func() error {
			_, err := reserve.Import(strings.NewReader("{}"))
			return err
		}, []error{reserve.ErrCorruptExport}},
		{"Import read", "reserve: Import: ", func() error {
			_, err := reserve.Import(iotest.ErrReader(errDisk))
			return err
		}, []error{errDisk}},
		{"Import nil", "reserve: Import: ", func() error {
			_, err := reserve.Import(nil)
			return err
		}, []error{reserve.ErrInvalid}},
		{"SetJournal write", "reserve: Ledger.SetJournal: ", func() error {
			return held().SetJournal(&failingWriter{})
		}, []error{reserve.ErrJournal, errDisk}},
		{"Export write", "reserve: Ledger.Export: ", func() error {
			return held().Export(&failingWriter{})
		}, []error{errDisk}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.call()
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), tc.prefix), "%q does not start with %q", err, tc.prefix)
			entry := tc.prefix[:strings.Index(tc.prefix[len("reserve: "):], ":")+len("reserve: ")]
			assert.Equal(t, 1, strings.Count(err.Error(), entry+":"), "%q names %s more than once", err, entry)
			for _, target := range tc.is {
				assert.ErrorIs(t, err, target)
			}
		})
	}
}
