package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/schedkit/schedkit/snapshot/load"
)

const whatifCluster = "testdata/whatif/cluster.yaml"

// TestWhatifModes runs each what-if mode on testdata/whatif (see the
// comments there): the arithmetic of each table is in its case.
func TestWhatifModes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// 1-CPU copies: a and b have 2 CPU free, c 1: 2 + 2 + 1 = 5.
		{"fit", []string{"-fit", "testdata/whatif/template.yaml"}, `5 copies fit
NODE  COPIES
a     2
b     2
c     1
next copy: 0/3 nodes are available: 3 Insufficient cpu.
`},
		// -limit 3 stops the count at 3 of the 5 that fit (one per node,
		// as the scorers spread them).
		{"fit limit", []string{"-fit", "testdata/whatif/template.yaml", "-limit", "3"}, `3 copies fit (stopped at -limit 3: more may fit; raise -limit to count them)
NODE  COPIES
a     1
b     1
c     1
`},
		// -limit 5 is exactly what fits: copy 6 was never tried, so the
		// count may have stopped at the limit.
		{"fit limit equal", []string{"-fit", "testdata/whatif/template.yaml", "-limit", "5"}, `5 copies fit (stopped at -limit 5: more may fit; raise -limit to count them)
NODE  COPIES
a     2
b     2
c     1
`},
		// The two 3-CPU batch pods fit no existing node (2, 2, 1 free).
		// small (4 CPU, 16Gi): one per node, 2 nodes, waste (8 − 6)/8 +
		// (32 − 8)/32 = 0.25 + 0.75 = 1; large (16 CPU, 64Gi): both on
		// one, (16 − 6)/16 + (64 − 8)/64 = 0.625 + 0.875 = 1.5.
		{"scale-up", []string{"-scale-up", "testdata/whatif/groups.yaml"}, `0 pending pods fit existing nodes
GROUP  NODES  PLACED  PENDING  WASTE
small  2      2       0        1.000
large  1      2       0        1.500
least-waste: small (waste 1.0000)
`},
		// The same templates with status.allocatable only: the same
		// waste, read from allocatable.
		{"scale-up allocatable only", []string{"-scale-up", "testdata/whatif/groups-allocatable.yaml"}, `0 pending pods fit existing nodes
GROUP  NODES  PLACED  PENDING  WASTE
small  2      2       0        1.000
large  1      2       0        1.500
least-waste: small (waste 1.0000)
`},
		{"scale-up priority", []string{"-scale-up", "testdata/whatif/groups.yaml", "-expander", "priority"}, `0 pending pods fit existing nodes
GROUP  NODES  PLACED  PENDING  WASTE
small  2      2       0        1.000
large  1      2       0        1.500
priority: large (priority 10)
`},
		// Each alone: a's and b's api pod (2 CPU) fits the other (2
		// free); c's pod has no controller.
		{"drain", []string{"-drain", "all"}, `NODE  REMOVABLE  BLOCK          POD                 MOVED
a     true                                          api-1->b
b     true                                          api-2->a
c     false      NotReplicated  default/standalone  
`},
		// Greedily: a goes, api-1 fills b (4 of 4); b's api-2 then needs
		// 2 CPU and only c's 1 is left.
		{"drain greedy", []string{"-drain", "a,b,c", "-greedy"}, `NODE  REMOVABLE  BLOCK              POD                 MOVED
a     true                                              api-1->b
b     false      NoPlaceToMovePods  default/api-2       
c     false      NotReplicated      default/standalone  
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, isWhatif(tc.args))
			var out, errb bytes.Buffer
			code := runWhatif(append(tc.args, "-objects", whatifCluster), &out, &errb)
			require.Equal(t, exitOK, code, errb.String())
			assert.Equal(t, tc.want, out.String())
		})
	}
}

// failingWriter fails every write, as a full disk or a closed pipe.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestWhatifWriteFails: an answer that cannot be written exits 1 with the
// error, in table and in JSON form (the table exited 0, silently).
func TestWhatifWriteFails(t *testing.T) {
	for _, args := range [][]string{{"-drain", "a"}, {"-drain", "a", "-o", "json"}, {"-fit", "testdata/whatif/template.yaml"}} {
		var errb bytes.Buffer
		code := runWhatif(append(args, "-objects", whatifCluster), failingWriter{}, &errb)
		assert.Equal(t, exitError, code, "%v", args)
		assert.Contains(t, errb.String(), "no space left on device", "%v", args)
	}
}

// TestWhatifDrainReadsPDBs: a PodDisruptionBudget among the -objects
// (pdb.yaml: the api pods, 0 disruptions allowed) blocks draining a and
// b, whose api pods would otherwise move. Before, the what-if modes fed
// only Nodes and Pods to the cache and -drain reported both removable.
func TestWhatifDrainReadsPDBs(t *testing.T) {
	var out, errb bytes.Buffer
	code := runWhatif([]string{"-drain", "a,b", "-objects", whatifCluster, "-objects", "testdata/whatif/pdb.yaml"}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	assert.Equal(t, `NODE  REMOVABLE  BLOCK         POD            MOVED
a     false      NotEnoughPdb  default/api-1  
b     false      NotEnoughPdb  default/api-2  
`, out.String())
}

// TestWhatifDrainRisky: risky.yaml's PDB allows one disruption and a
// runs two of its pods (api-1, 2 CPU, and api-3, 1 CPU): a is removable
// (api-1 to b, 2 CPU free; api-3 to c, 1 CPU free) but risky.
func TestWhatifDrainRisky(t *testing.T) {
	var out, errb bytes.Buffer
	code := runWhatif([]string{"-drain", "a", "-objects", whatifCluster, "-objects", "testdata/whatif/risky.yaml"}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	assert.Equal(t, `NODE  REMOVABLE     BLOCK  POD  MOVED
a     true (risky)              api-1->b api-3->c
`, out.String())
	out.Reset()
	code = runWhatif([]string{"-drain", "a", "-o", "json", "-objects", whatifCluster, "-objects", "testdata/whatif/risky.yaml"}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	assert.Contains(t, out.String(), `"risky": true`)
}

func TestWhatifJSON(t *testing.T) {
	var out, errb bytes.Buffer
	code := runWhatif([]string{"-scale-up", "testdata/whatif/groups.yaml", "-o", "json", "-objects", whatifCluster}, &out, &errb)
	require.Equal(t, exitOK, code, errb.String())
	var got struct {
		Chosen string
		Groups []struct {
			Group      string
			NodesAdded int
			Placed     []struct{ Pod, Node string }
		}
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	assert.Equal(t, "small", got.Chosen)
	require.Len(t, got.Groups, 2)
	assert.Equal(t, 2, got.Groups[0].NodesAdded)
	assert.Equal(t, "default/batch-1", got.Groups[0].Placed[0].Pod)
	assert.Equal(t, "small-new-0", got.Groups[0].Placed[0].Node)
}

func TestWhatifUsage(t *testing.T) {
	assert.False(t, isWhatif([]string{"-objects", "x.yaml", "-policy", "default"}))
	for name, args := range map[string][]string{
		"two modes":    {"-fit", "testdata/whatif/template.yaml", "-drain", "all", "-objects", whatifCluster},
		"no objects":   {"-drain", "all"},
		"bad expander": {"-scale-up", "testdata/whatif/groups.yaml", "-expander", "cheapest", "-objects", whatifCluster},
		"unknown node": {"-drain", "z", "-objects", whatifCluster},
		"no template":  {"-fit", whatifCluster, "-objects", whatifCluster},
		"bad output":   {"-drain", "all", "-o", "yaml", "-objects", whatifCluster},
	} {
		var out, errb bytes.Buffer
		assert.Equal(t, exitUsage, runWhatif(args, &out, &errb), name)
		assert.Contains(t, errb.String(), "simulate: ", name)
	}
	// One line that says what is wrong (a trial found "give one of"
	// for an empty -drain and the whole usage for an unknown flag).
	for args, want := range map[string]string{
		"-drain|":                     "simulate: -drain is empty: give node names or all (see -h)\n",
		"-fit|" + whatifCluster:       "simulate: give one of -fit, -scale-up, -drain, not -drain and -fit (see -h)\n",
		"-drain|all|-svg|x.svg":       "simulate: flag provided but not defined: -svg (see -h)\n",
		"-scale-up|g.yaml|-drain|all": "simulate: give one of -fit, -scale-up, -drain, not -drain and -scale-up (see -h)\n",
		// The flag package said only "parse error".
		"-drain|all|-seed|-1": `simulate: invalid value "-1" for flag -seed: "-1": want an unsigned integer 0..18446744073709551615 (see -h)` + "\n",
	} {
		var out, errb bytes.Buffer
		a := strings.Split(args, "|")
		if a[0] == "-fit" {
			a = append(a, "-drain", "n1")
		}
		assert.Equal(t, exitUsage, runWhatif(append(a, "-objects", whatifCluster), &out, &errb), args)
		assert.Equal(t, want, errb.String(), args)
	}
}

// TestWhatifFitNotOnePod: a -fit file without exactly one Pod names the
// file and says what it holds (the cluster file: 5 Pods, 3 Nodes).
func TestWhatifFitNotOnePod(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, exitUsage, runWhatif([]string{"-fit", whatifCluster, "-objects", whatifCluster}, &out, &errb))
	assert.Contains(t, errb.String(), "simulate: -fit "+whatifCluster+": want exactly one Pod, the file has 5 Pods, 3 Nodes and 0 other objects")
	assert.NotContains(t, errb.String(), "<nil>")
}

// TestWhatifScaleUpHelp: -h documents the group annotations -scale-up
// reads.
func TestWhatifScaleUpHelp(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, exitOK, runWhatif([]string{"-scale-up", "testdata/whatif/groups.yaml", "-h"}, &out, &errb))
	assert.Contains(t, errb.String(), maxNodesAnnotation+" (nodes it may add, default 100)")
	assert.Contains(t, errb.String(), priorityAnnotation+" (rank for -expander priority, default 0)")
}

// TestWhatifModeHelp (trial 7): "simulate -fit -h", as the main usage
// suggests, prints the what-if flags; before, "-h" became -fit's path and
// the run failed with "the what-if modes need -objects".
func TestWhatifModeHelp(t *testing.T) {
	for _, mode := range []string{"-fit", "-scale-up", "-drain"} {
		var out, errb bytes.Buffer
		assert.Equal(t, exitOK, runWhatif([]string{mode, "-h"}, &out, &errb), mode)
		assert.Contains(t, errb.String(), "-expander EXPANDER", mode)
		assert.Contains(t, errb.String(), "Exit status: 0 answered", mode)
		assert.NotContains(t, errb.String(), "need -objects", mode)
		assert.Regexp(t, `-seed SEED\n\s+SEED of the scheduler's and the expander's tie-breaks \(default 1\)\n`, errb.String(), mode)
	}
}

// TestWhatifUnknownFields (trial 8): "simulate -fit typo.yaml" with
// "resource:" for "resources:" in the template counted 220 copies of a
// pod with no requests and said nothing, and the what-if modes had no
// -strict. Now a typo in -objects, the -fit template or the -scale-up
// groups is one warning line naming the file and field, the run goes on
// (the template without requests: 100 copies at -limit 100), and -strict
// makes each an error; an object the modes do not read is the same.
func TestWhatifUnknownFields(t *testing.T) {
	tmp := t.TempDir()
	template := writeFile(t, tmp, "typo.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: t, namespace: default}\nspec: {containers: [{name: c, resource: {requests: {cpu: '1'}}}]}\n")
	groups := writeFile(t, tmp, "groups.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: small}\nstatus: {allocatabel: {cpu: '4'}, allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}\n")
	cluster := writeFile(t, tmp, "cluster.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}, capacty: {}}\n")
	deploy := writeFile(t, tmp, "deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d, namespace: default}\n")
	groupsPod := writeFile(t, tmp, "groups-pod.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: small}\nstatus: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec: {containers: [{name: c, image: x}]}\n")
	for _, tc := range []struct {
		name  string
		args  []string
		field string
	}{
		{"fit template", []string{"-fit", template, "-limit", "100", "-objects", whatifCluster}, `unknown field "spec.containers[0].resource"`},
		{"scale-up groups", []string{"-scale-up", groups, "-objects", whatifCluster}, `unknown field "status.allocatabel"`},
		{"objects", []string{"-drain", "all", "-objects", cluster}, `unknown field "status.capacty"`},
		{"skipped kind", []string{"-drain", "all", "-objects", whatifCluster, "-objects", deploy}, "apps/v1 Deployment"},
		// A Pod among the groups was ignored without a word, -strict or not.
		{"scale-up groups with a Pod", []string{"-scale-up", groupsPod, "-objects", whatifCluster}, "-scale-up " + groupsPod + `: Pod "default/p" is not a Node template`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			require.Equal(t, exitOK, runWhatif(tc.args, &out, &errb), errb.String())
			var warn []string
			for _, l := range strings.Split(errb.String(), "\n") {
				if strings.Contains(l, "warning") {
					warn = append(warn, l)
				}
			}
			require.Len(t, warn, 1, errb.String())
			assert.Contains(t, warn[0], tc.field)
			assert.Contains(t, warn[0], "-strict rejects")
			if tc.name == "fit template" {
				assert.Contains(t, out.String(), "100 copies fit")
			}

			out.Reset()
			errb.Reset()
			require.Equal(t, exitUsage, runWhatif(append([]string{"-strict"}, tc.args...), &out, &errb), errb.String())
			assert.Contains(t, errb.String(), tc.field)
			if tc.name == "skipped kind" {
				assert.Contains(t, errb.String(), `deploy.yaml:1: document 1: Deployment "default/d": load: kind not accepted: apps/v1 Deployment`)
			}
			assert.NotContains(t, errb.String(), "warning")
			assert.Empty(t, out.String())
		})
	}
	// The clean inputs warn of nothing, with or without -strict.
	for _, strict := range []bool{false, true} {
		args := []string{"-fit", "testdata/whatif/template.yaml", "-objects", whatifCluster}
		if strict {
			args = append([]string{"-strict"}, args...)
		}
		var out, errb bytes.Buffer
		require.Equal(t, exitOK, runWhatif(args, &out, &errb), errb.String())
		assert.Empty(t, errb.String())
		assert.Contains(t, out.String(), "5 copies fit")
	}
}

// TestNotNodes: the objects of a -scale-up file that are not Nodes are
// named, Pods first, namespaced ones with their namespace; past five, the
// rest are counted.
func TestNotNodes(t *testing.T) {
	pod := func(name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
	}
	for _, tc := range []struct {
		name string
		objs load.Objects
		want string
	}{
		{"nodes only", load.Objects{Nodes: []*v1.Node{{}}}, ""},
		{"one pod", load.Objects{Pods: []*v1.Pod{pod("p")}}, `Pod "default/p" is not a Node template`},
		{"a pod and others", load.Objects{
			Others: []runtime.Object{
				&v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team"}},
				&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high"}},
			},
			Pods: []*v1.Pod{pod("p")},
		}, `3 objects are not Node templates: Pod "default/p", Service "team/web", PriorityClass "high"`},
		{"seven pods", load.Objects{Pods: []*v1.Pod{pod("a"), pod("b"), pod("c"), pod("d"), pod("e"), pod("f"), pod("g")}},
			`7 objects are not Node templates: Pod "default/a", Pod "default/b", Pod "default/c", Pod "default/d", Pod "default/e" and 2 more`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, n := notNodes(tc.objs)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, len(tc.objs.Pods)+len(tc.objs.Others), n)
		})
	}
}
