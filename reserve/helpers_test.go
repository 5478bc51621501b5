package reserve_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"

	"github.com/schedkit/schedkit/reserve"
)

func export(t testing.TB, l *reserve.Ledger) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, l.Export(&b))
	return b.String()
}

// boundPods returns the "pods" of an Export.
func boundPods(t testing.TB, exported string) []*v1.Pod {
	t.Helper()
	var doc struct {
		State struct {
			Pods []*v1.Pod `json:"pods"`
		} `json:"state"`
	}
	require.NoError(t, json.Unmarshal([]byte(exported), &doc))
	return doc.State.Pods
}

func bytesReader(s string) *bytes.Reader { return bytes.NewReader([]byte(s)) }
