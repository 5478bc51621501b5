package load

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const podYAML = `apiVersion: v1
kind: Pod
metadata:
  name: web
  labels:
    app.kubernetes.io/name: web
    "quoted/key": x
spec:
  containers:
  - name: a
    image: nginx
    args:
    - |
      a block scalar
      requests: not a key
    - plain
    resources:
      requests:
        cpu: "-1"
        memory: 1Gi
  - name: b
    resources:
      limits: {cpu: "2"}
  initContainers:
    - name: init
      resources:
        requests:
          cpu: 100m
status:
  phase: Pending
`

func TestFieldLine(t *testing.T) {
	for _, tc := range []struct {
		field string
		line  int // 0: not found
	}{
		{"kind", 2},
		{"metadata.name", 4},
		{"metadata.labels[app.kubernetes.io/name]", 6},
		{"metadata.labels[quoted/key]", 7},
		{"spec.containers[0]", 10},
		{"spec.containers[0].name", 10},
		{"spec.containers[0].args[0]", 13},
		{"spec.containers[0].args[1]", 16},
		{"spec.containers[0].resources.requests[cpu]", 19},
		{"spec.containers[0].resources.requests[memory]", 20},
		{"spec.containers[1].name", 21},
		// In a flow mapping: its key's line, the longest part spelled.
		{"spec.containers[1].resources.limits[cpu]", 23},
		// Absent: the longest part that is there.
		{"spec.containers[1].resources.requests[cpu]", 22},
		{"spec.containers[2].name", 9},
		{"spec.initContainers[0].resources.requests[cpu]", 28},
		{"status.phase", 30},
		{"spec.nodeName", 8},
		{"nothere.at.all", 0},
		{"", 0},
		{"spec..x", 0},
		{"spec.containers[0", 0},
	} {
		got, ok := fieldLine([]byte(podYAML), tc.field)
		assert.Equal(t, tc.line != 0, ok, tc.field)
		if tc.line != 0 {
			assert.Equal(t, tc.line, got, tc.field)
		}
	}
}

// Text it cannot follow past a point keeps what it found before it: a
// flow mapping spanning lines, a tab.
func TestFieldLineStopsWhereItCannotFollow(t *testing.T) {
	text := "metadata:\n  name: a\nspec: {containers: [\n  {name: c}]}\n"
	got, ok := fieldLine([]byte(text), "spec.containers[0].name")
	assert.True(t, ok)
	assert.Equal(t, 3, got, "spec's line, whose flow collection goes on: not followed")
	_, ok = fieldLine([]byte(text+"status:\n  phase: x\n"), "status.phase")
	assert.False(t, ok, "nothing after it is read")
	got, ok = fieldLine([]byte(text), "metadata.name")
	assert.True(t, ok)
	assert.Equal(t, 2, got)
	got, ok = fieldLine([]byte("a:\n\tb: 1\n"), "a.b")
	assert.True(t, ok)
	assert.Equal(t, 1, got)
	_, ok = fieldLine([]byte(`{"kind": "Pod", "metadata": {"name": "x"}}`), "metadata.name")
	assert.False(t, ok, "JSON is one flow mapping")
}

// node is a random YAML value for the property test: a mapping (keys
// set), a sequence (items set) or a scalar.
type node struct {
	keys  []string
	vals  []*node
	items []*node
}

func randomNode(r *rand.Rand, depth int) *node {
	switch k := r.IntN(4); {
	case depth == 0 || k == 0:
		return nil // a scalar
	case k == 1:
		n := &node{items: make([]*node, 1+r.IntN(3))}
		for i := range n.items {
			n.items[i] = randomNode(r, depth-1)
		}
		return n
	default:
		n := &node{}
		for i := range 1 + r.IntN(3) {
			key := fmt.Sprintf("k%d", i)
			switch r.IntN(4) {
			case 0:
				key = fmt.Sprintf("%q", "q.k/"+key)
			case 1:
				key = "x.io/" + key
			}
			n.keys = append(n.keys, key)
			n.vals = append(n.vals, randomNode(r, depth-1))
		}
		return n
	}
}

// emit writes n as block YAML at indent, recording each path's line
// in lines; kubectl puts a sequence at its key's column, indented
// styles two deeper.
func emit(b *bytes.Buffer, r *rand.Rand, n *node, indent int, path string, lines map[string]int, line *int, inItem bool) {
	pad := strings.Repeat(" ", indent)
	if n.items != nil {
		for i, it := range n.items {
			p := fmt.Sprintf("%s[%d]", path, i)
			lines[p] = *line
			b.WriteString(pad + "- ")
			switch {
			case it == nil:
				b.WriteString("scalar\n")
				*line++
			case it.items != nil || r.IntN(3) == 0:
				b.WriteString("\n")
				*line++
				emit(b, r, it, indent+2, p, lines, line, false)
			default:
				emit(b, r, it, indent+2, p, lines, line, true) // first key on the dash's line
			}
		}
		return
	}
	for i, key := range n.keys {
		if !(inItem && i == 0) {
			b.WriteString(pad)
		}
		name := strings.Trim(key, `"`)
		p := path + "." + name
		if strings.ContainsAny(name, "./") {
			p = path + "[" + name + "]"
		}
		p = strings.TrimPrefix(p, ".")
		lines[p] = *line
		v := n.vals[i]
		switch {
		case v == nil && r.IntN(5) == 0:
			b.WriteString(key + ": |\n" + pad + "  text: x\n" + pad + "  - y\n")
			*line += 3
		case v == nil:
			b.WriteString(key + ": v\n")
			*line++
		case v.items != nil:
			b.WriteString(key + ":\n")
			*line++
			in := indent
			if r.IntN(2) == 0 {
				in += 2
			}
			emit(b, r, v, in, p, lines, line, false)
		default:
			b.WriteString(key + ":\n")
			*line++
			emit(b, r, v, indent+2, p, lines, line, false)
		}
	}
}

// Against the lines a writer of random block YAML recorded: every path
// of the document, leaf or not, is found at its line.
func TestFieldLineMatchesWriter(t *testing.T) {
	for seed := range uint64(500) {
		r := rand.New(rand.NewPCG(seed, 11))
		root := randomNode(r, 5)
		if root == nil || root.keys == nil {
			continue
		}
		var b bytes.Buffer
		lines, line := map[string]int{}, 1
		emit(&b, r, root, 0, "", lines, &line, false)
		for p, want := range lines {
			got, ok := fieldLine(b.Bytes(), p)
			require.True(t, ok, "seed %d: %s in\n%s", seed, p, b.String())
			require.Equal(t, want, got, "seed %d: %s in\n%s", seed, p, b.String())
		}
	}
}

func FuzzFieldLine(f *testing.F) {
	f.Add([]byte(podYAML), "spec.containers[0].resources.requests[cpu]")
	f.Add([]byte("a:\n- - b: 1\n  - c\n"), "a[0][1]")
	f.Add([]byte("a: |\n  b: 1\n"), "a.b")
	f.Add([]byte("- x\n"), "[0]")
	f.Fuzz(func(t *testing.T, text []byte, field string) {
		line, ok := fieldLine(text, field)
		if !ok {
			return
		}
		n := bytes.Count(text, []byte{'\n'}) + 1
		if line < 1 || line > n {
			t.Fatalf("line %d of %d", line, n)
		}
		// The line names the path's step it stands for: a key or a dash.
		got := bytes.Split(text, []byte{'\n'})[line-1]
		if !bytes.Contains(got, []byte{':'}) && !bytes.Contains(got, []byte{'-'}) {
			t.Fatalf("line %d %q is neither a key nor an item", line, got)
		}
	})
}

// Read puts an error on its field's line in a plain document, in an item
// of a kubectl List (read item by item), and leaves a JSON document's
// error on the document's line.
func TestReadPutsErrorsOnTheFieldLine(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		line     int
	}{
		{"document", "apiVersion: v1\nkind: Node\nmetadata:\n  name: a\nstatus:\n  capacity:\n    pods: '10'\n    cpu: -1\n", 8},
		{"List item", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: b}\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n  status:\n    capacity:\n      cpu: -1\n", 13},
		{"JSON", `{"apiVersion": "v1", "kind": "Node",` + "\n" + `"metadata": {"name": "a"},` + "\n" + `"status": {"capacity": {"cpu": "-1"}}}`, 1},
		{"second document", "apiVersion: v1\nkind: Node\nmetadata: {name: b}\n---\n# c\napiVersion: v1\nkind: Node\nmetadata: {name: a}\nstatus: {capacity: {cpu: -1}}\n", 9},
	} {
		_, err := Read(strings.NewReader(tc.in), "in.yaml")
		var e *Error
		require.ErrorAs(t, err, &e, tc.name)
		assert.Equal(t, "status.capacity[cpu]", e.Field, tc.name)
		assert.Equal(t, tc.line, e.Line, "%s: %v", tc.name, err)
	}
}
