// Tests of a last-look reviewer's findings (session 18).

package load

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A key given twice keeps its last value (go-yaml), so an error about it
// must be on the last occurrence's line, not the first's.
func TestRepeatedKeyErrorOnLastOccurrence(t *testing.T) {
	for _, tc := range []struct {
		in   string
		line int
	}{
		{"apiVersion: v1\nkind: Node\nmetadata:\n  name: a\nstatus:\n  capacity:\n    cpu: '1'\n    cpu: -1\n", 8},
		{"apiVersion: v1\nkind: Node\nmetadata:\n  name: a\nstatus:\n  capacity:\n    cpu: '1'\nstatus:\n  capacity:\n    cpu: -1\n", 10},
	} {
		_, err := Read(strings.NewReader(tc.in), "in.yaml")
		var e *Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, tc.line, e.Line, "%v", err)
	}
}

// A ReplicaSet scaled to its Deployment's spec.replicas: the "too many
// pods" error is the Deployment's, on its spec.replicas line (it was on
// the ReplicaSet's, which says 2).
func TestTooManyPodsOfAScaledReplicaSetOnTheDeploymentsLine(t *testing.T) {
	in := zDeploy("1000001", "", "") + zRS("web-new", "new", "2", "front", true, "")
	_, err := Options{ExpandWorkloads: true}.Read(strings.NewReader(in), "in.yaml")
	var e *Error
	require.ErrorAs(t, err, &e)
	line := strings.Split(in, "\n")[e.Line-1]
	assert.Contains(t, line, "1000001", "error %v put on line %d: %q", err, e.Line, line)
}

// go-yaml v2 reads U+2028 (and U+0085, U+2029) as a line break, as it
// does a lone CR: the key given twice must not be dropped silently.
func TestLineSeparatorRepeatsKey(t *testing.T) {
	assert.True(t, mayRepeatKey([]byte("b:\n  a: x\u2028  a: y\n")))
	in := "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\u2028  name: b\nstatus:\n  capacity:\n    cpu: '1'\n"
	objs, err := Options{}.Read(strings.NewReader(in), "in.yaml")
	require.NoError(t, err)
	assert.Equal(t, "b", objs.Nodes[0].Name)
	assert.NotEmpty(t, objs.Warnings, "metadata.name given twice, no warning")
}

// A dump taken mid-rollout (surge) asks nothing: the ReplicaSets'
// desired-replicas annotation is the Deployment's spec.replicas
// (upstream isScalingEvent). No ErrNotExpanded then.
func TestNoNotExpandedWarningMidRollout(t *testing.T) {
	desired := "  annotations: {deployment.kubernetes.io/desired-replicas: '4'}\n"
	in := zDeploy("4", "", "") + zRS("web-new", "new", "2", "front", true, desired) + zRS("web-old", "old", "3", "back", true, desired)
	objs, err := Options{ExpandWorkloads: true}.Read(strings.NewReader(in), "in.yaml")
	require.NoError(t, err)
	for _, w := range objs.Warnings {
		assert.False(t, errors.Is(w, ErrNotExpanded), "%v", w)
	}
}

// A paused Deployment is scaled by the controller (sync -> scale), and
// by load.
func TestPausedDeploymentIsScaled(t *testing.T) {
	for name, in := range map[string]string{
		"paused": zDeploy("5", "  paused: true\n", "") + zRS("web-new", "new", "2", "front", true, ""),
	} {
		objs, err := Options{ExpandWorkloads: true}.Read(strings.NewReader(in), "in.yaml")
		require.NoError(t, err)
		assert.Len(t, objs.Pods, 5, name)
	}
}

func zDeploy(replicas, extraSpec, metaExtra string) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop, uid: d-uid" + metaExtra + "}\nspec:\n  replicas: " + replicas + "\n" + extraSpec +
		"  selector: {matchLabels: {app: web}}\n" +
		"  template:\n    metadata: {labels: {app: web, tier: front}, annotations: {note: x}}\n" +
		"    spec: {containers: [{name: c, resources: {limits: {cpu: 500m, memory: 1Gi}}}]}\n"
}

func zRS(name, hash, replicas, tier string, owned bool, ann string) string {
	own := ""
	if owned {
		own = "  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-uid, controller: true}]\n"
	}
	return "---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: " + name + "\n  namespace: shop\n" + own + ann +
		"  labels: {app: web, pod-template-hash: " + hash + "}\n" +
		"spec:\n  replicas: " + replicas + "\n  selector: {matchLabels: {app: web, pod-template-hash: " + hash + "}}\n" +
		"  template:\n    metadata: {labels: {app: web, tier: " + tier + ", pod-template-hash: " + hash + "}, annotations: {note: x}}\n" +
		"    spec: {containers: [{name: c, resources: {limits: {cpu: 500m, memory: 1Gi}}}]}\n"
}
