package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestObjectsUnknownFieldWarning: without -strict, an -objects file with
// a field k8s.io/api does not know ("resource:" for "resources:") placed
// the pod with zero requests and said nothing (trial 5). It still runs,
// and stderr has one warning line naming the file, object and field;
// a clean file gives no warning.
func TestObjectsUnknownFieldWarning(t *testing.T) {
	tmp := t.TempDir()
	const doc = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default}\nspec:\n  containers:\n  - name: c\n    image: x\n    resource: {requests: {cpu: '64'}}\n"
	typo := writeFile(t, tmp, "typo.yaml", doc)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run([]string{"-objects", typo}, &stdout, &stderr), stderr.String())
	var warn []string
	for _, l := range strings.Split(stderr.String(), "\n") {
		if strings.Contains(l, "warning") {
			warn = append(warn, l)
		}
	}
	require.Len(t, warn, 1, stderr.String())
	require.Contains(t, warn[0], "typo.yaml")
	require.Contains(t, warn[0], `Pod "default/p1"`)
	require.Contains(t, warn[0], `unknown field "spec.containers[0].resource"`)

	clean := writeFile(t, tmp, "clean.yaml", strings.Replace(strings.Replace(doc, "resource:", "resources:", 1), "'64'", "'1'", 1))
	stderr.Reset()
	require.Equal(t, 0, run([]string{"-objects", clean}, &stdout, &stderr), stderr.String())
	require.NotContains(t, stderr.String(), "warning")
}
