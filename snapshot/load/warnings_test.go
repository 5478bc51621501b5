package load_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot/load"
)

// Without Strict a key given twice keeps its last value, as kubectl and
// the API server keep it, and is listed in Objects.Warnings with the
// error Strict returns for it; nothing is lost silently.
func TestReadWarnsOfRepeatedKeys(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     []string // the warnings, each also the strict error
		node     string   // the node's name as loaded leniently
	}{
		{
			name: "YAML block mapping",
			in:   nodeYAML + "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: a\n  labels: {x: z}\n  name: b\n",
			want: []string{`in.yaml:18: document 2: load: unknown or duplicate field: error converting YAML to JSON: yaml: unmarshal errors:` + "\n" + `  line 18: key "name" already set in map`},
			node: "b",
		},
		{
			name: "YAML flow mapping",
			in:   "apiVersion: v1\nkind: Node\nmetadata: {name: a, name: b}\n",
			want: []string{`in.yaml:3: document 1: load: unknown or duplicate field: error converting YAML to JSON: yaml: unmarshal errors:` + "\n" + `  line 3: key "name" already set in map`},
			node: "b",
		},
		{
			name: "JSON",
			in:   `{"apiVersion":"v1","kind":"Node","metadata":{"name":"a","name":"b"}}`,
			want: []string{`in.yaml:1: document 1: Node "b": load: unknown or duplicate field: strict decoding error: duplicate field "metadata.name"`},
			node: "b",
		},
		{
			name: "JSON, an unknown field is not a warning",
			in:   `{"apiVersion":"v1","kind":"Node","metadata":{"name":"a"},"spec":{"future":1}}`,
			node: "a",
		},
		{
			name: "kubectl List item read item by item",
			in:   "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata:\n    name: a\n    name: c\n",
			want: []string{`in.yaml:8: document 1, items[0]: load: unknown or duplicate field: error converting YAML to JSON: yaml: unmarshal errors:` + "\n" + `  line 8: key "name" already set in map`},
			node: "c",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			objs, err := load.Read(strings.NewReader(c.in), "in.yaml")
			require.NoError(t, err)
			require.NotEmpty(t, objs.Nodes)
			assert.Equal(t, c.node, objs.Nodes[len(objs.Nodes)-1].Name, "the last value is kept")
			var got []string
			for _, w := range objs.Warnings {
				assert.ErrorIs(t, w, load.ErrUnknownField)
				got = append(got, w.Error())
			}
			assert.Equal(t, c.want, got)

			_, cobjs, err := load.Options{}.ReadCache(strings.NewReader(c.in), "in.yaml")
			require.NoError(t, err)
			assert.Equal(t, objs.Warnings, cobjs.Warnings, "ReadCache warns as Read")

			_, serr := load.Options{Strict: true}.Read(strings.NewReader(c.in), "in.yaml")
			if len(c.want) == 0 {
				return
			}
			require.Error(t, serr)
			assert.Equal(t, c.want[0], serr.Error(), "Strict's error is the warning")
		})
	}
}
