package load

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/schedkit/schedkit/internal/shareddata"
)

var dupKeyCases = []struct {
	name string
	in   string
	may  bool // mayRepeatKey's answer
}{
	{"node, no repeat", "apiVersion: v1\nkind: Node\nmetadata:\n  labels:\n    a: b\n  name: n\nstatus:\n  capacity:\n    cpu: '4'\n  allocatable:\n    cpu: '4'\n", false},
	{"top-level repeat", "apiVersion: v1\nkind: Node\nkind: Pod\n", true},
	{"nested repeat", "metadata:\n  name: a\n  labels: {}\n  name: b\n", true},
	{"same key in sibling mappings", "a:\n  x: 1\nb:\n  x: 1\n", false},
	{"sequence items are separate mappings", "c:\n- name: a\n  image: x\n- name: b\n  image: y\n", false},
	{"repeat inside one item", "c:\n- name: a\n  name: b\n", true},
	{"repeat after a nested sequence", "spec:\n  containers:\n  - name: a\n  containers:\n  - name: b\n", true},
	{"nested sequences", "a:\n- - p: 1\n    q: 2\n  - p: 1\n", false},
	{"dash alone", "a:\n-\n  x: 1\n  x: 2\n", true},
	{"flow mapping", "metadata: {name: a, name: b}\n", true},
	{"empty flow", "labels: {}\nitems: []\n", false},
	{"quoted key", "'a': 1\na: 2\n", true},
	{"numeric keys", "1: a\n01: b\n", true},
	{"bool keys", "yes: a\ntrue: b\n", true},
	{"merge key", "a: &x {b: 1}\nc:\n  <<: *x\n  b: 2\n", true},
	{"quoted value open", "a: \"x\n  y\"\nb: 1\n", true},
	{"quoted values closed", "a: 'it''s'\nb: \"q\\\"\"\n", false},
	{"block scalar", "a: |\n  p: 1\n  q: 2\nb: 1\n", false},
	{"block scalar looking repeated", "a: |\n  x: 1\n  x: 2\n", false},
	{"block scalar then a repeat", "a: >-\n  x\n\n  y\nb: 1\na: 2\n", true},
	{"item block scalar", "s:\n- |\n  {\"a\": 1}\n  t: 1\n  t: 2\n- p: 1\n  p: 2\n", true},
	{"item block scalar alone", "s:\n- |\n  {\"a\": 1}\n  t: 1\n  t: 2\n- p: 1\n", false},
	{"kubectl last-applied", "metadata:\n  annotations:\n    kubectl.kubernetes.io/last-applied-configuration: |\n      {\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n  name: p\nspec: {}\n", false},
	{"block scalar with a tab", "a: |\n  x\ty\nb: 1\n", false},
	{"leading separator and comment", "---\n# c\na: 1\n", false},
	{"tab", "a:\t1\n", true},
	{"trailing blank in key", "a : 1\na: 2\n", true},
}

func TestMayRepeatKey(t *testing.T) {
	for _, c := range dupKeyCases {
		require.Equal(t, c.may, mayRepeatKey([]byte(c.in)), c.name)
	}
}

// FuzzMayRepeatKey: whenever go-yaml's strict conversion finds a repeated
// key in a text the lenient one converts, mayRepeatKey said it might.
func FuzzMayRepeatKey(f *testing.F) {
	for _, c := range dupKeyCases {
		f.Add(c.in)
	}
	f.Add(strings.Repeat("a:\n  b: 1\n", 2))
	f.Fuzz(func(t *testing.T, in string) {
		var lenient, strict any
		if yaml.Unmarshal([]byte(in), &lenient) != nil {
			return
		}
		if err := yaml.UnmarshalStrict([]byte(in), &strict); err != nil && !mayRepeatKey([]byte(in)) {
			t.Fatalf("strict conversion fails (%v) but mayRepeatKey(%q) is false", err, in)
		}
	})
}

// The openb node YAML (1213 documents) is cleared by the scan alone: no
// document is parsed a second time.
func TestMayRepeatKeyQuietOnRealData(t *testing.T) {
	path := filepath.Join(shareddata.Dir(t, "alibaba-clusterdata-gpu-v2023"), "node_yaml", "openb_node_list_gpu_node.yaml")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	docs := strings.Split(string(data), "\n---\n")
	require.Len(t, docs, 1213)
	for i, d := range docs {
		require.False(t, mayRepeatKey([]byte(d)), "document %d:\n%s", i+1, d)
	}
}

// BenchmarkMayRepeatKey: the scan on one openb node document, beside the
// conversion to JSON it saves a second run of (the strict one).
func BenchmarkMayRepeatKey(b *testing.B) {
	path := filepath.Join(shareddata.Dir(b, "alibaba-clusterdata-gpu-v2023"), "node_yaml", "openb_node_list_gpu_node.yaml")
	data, err := os.ReadFile(path)
	require.NoError(b, err)
	doc := []byte(strings.Split(string(data), "\n---\n")[0])
	for _, how := range []string{"scan", "yaml.Unmarshal"} {
		b.Run("how="+how, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if how == "scan" {
					if mayRepeatKey(doc) {
						b.Fatal("scan fired")
					}
					continue
				}
				var js json.RawMessage
				if err := yaml.Unmarshal(doc, &js); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
