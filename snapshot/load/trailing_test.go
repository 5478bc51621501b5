package load_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/schedkit/schedkit/snapshot/load"
)

// trailingInputs are inputs where go-yaml, given a document, converts its
// first flow collection (or what precedes a "..." line) and ignores the
// rest: the loader returned fewer objects than the input holds, with no
// error (a new-user trial, inputs 06, 13, 14, 33, 34 and a cut JSON
// stream). Each must now be an ErrSyntax error at the line given: where
// the content after the first value starts (before TestYAMLErrorLines'
// fix, the YAML cases named the line before it, the first value's).
var trailingInputs = []struct {
	name string
	in   string
	line int
	doc  int
}{
	{"JSON stream cut in its second value",
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"}}}` + "\n" +
			`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"x"},"spec":{"containers":[{"name":"c"`, 2, 2},
	{"one JSON object then garbage",
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}` + "\ngarbage here\n", 2, 2},
	{"JSON cut on the same line",
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}} {"apiVersion":"v1","kind":"Pod"`, 1, 2},
	{"one JSON object then a YAML Pod without separator",
		`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}` + "\napiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: ns1}\n", 2, 2},
	{"YAML flow mapping then block mapping",
		"---\n{apiVersion: v1, kind: Node, metadata: {name: n1}}\napiVersion: v1\nkind: Node\nmetadata: {name: n2}\n", 3, 1},
	{"YAML then two JSON lines after a separator",
		"apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n---\n" +
			`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}` + "\n" +
			`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"}}` + "\n", 6, 2},
	{"two flow mappings, comments and blanks first",
		"apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n---\n# c\n\n  {apiVersion: v1, kind: Node, metadata: {name: n1}}\n  {apiVersion: v1, kind: Node, metadata: {name: n2}}\n", 8, 2},
	{"a document after a document end marker",
		"apiVersion: v1\nkind: Node\nmetadata: {name: n0}\n...\napiVersion: v1\nkind: Node\nmetadata: {name: n1}\n", 5, 1},
	{"a List item of two flow mappings",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: n0}\n-   {apiVersion: v1, kind: Node, metadata: {name: n1}}\n    {apiVersion: v1, kind: Node, metadata: {name: n2}}\n", 8, 1},
}

// TestReadRejectsTrailingContent: every input in trailingInputs is an
// ErrSyntax error naming the file and line in Read, ReadCache, Files and
// FilesCache, with nothing loaded (before: 1 object fewer than the input
// holds, no error).
func TestReadRejectsTrailingContent(t *testing.T) {
	for _, tt := range trailingInputs {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "in.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tt.in), 0o600))
			check := func(how, file string, err error) {
				require.ErrorIs(t, err, load.ErrSyntax, "%s", how)
				var e *load.Error
				require.ErrorAs(t, err, &e, "%s", how)
				assert.Equal(t, file, e.File, "%s: %v", how, err)
				assert.Equal(t, tt.line, e.Line, "%s line: %v", how, err)
				assert.Equal(t, tt.doc, e.Document, "%s document: %v", how, err)
			}
			for _, strict := range []bool{false, true} {
				opts := load.Options{Strict: strict}
				objs, err := opts.Read(strings.NewReader(tt.in), "in.yaml")
				check("Read", "in.yaml", err)
				assert.Equal(t, load.Objects{}, objs)
				c, _, err := opts.ReadCache(strings.NewReader(tt.in), "in.yaml")
				check("ReadCache", "in.yaml", err)
				assert.Nil(t, c)
				_, err = opts.Files(path)
				check("Files", path, err)
				c, _, err = opts.FilesCache([]string{path})
				check("FilesCache", path, err)
				assert.Nil(t, c)
			}
		})
	}
}

// total counts the objects of a successful read, skipped kinds included.
func total(o load.Objects) int {
	n := len(o.Nodes) + len(o.Pods) + len(o.Others)
	for _, k := range o.Skipped {
		n += k
	}
	return n
}

// FuzzReadConcat: the loader never returns fewer objects than the input
// holds without an error. Inputs a and b that each read without error
// (counts A and B) are joined as YAML documents ("a\n---\nb"): the result
// is an error (duplicate names, or a JSON stream that is not one YAML
// document) or holds A+B objects, never fewer.
func FuzzReadConcat(f *testing.F) {
	for _, tt := range trailingInputs {
		i := strings.IndexByte(tt.in[1:], '\n') + 1
		f.Add(tt.in[:i], tt.in[i:])
	}
	f.Add(nodeYAML, podYAML)
	// Two JSON lines read alone are a JSON stream of two objects; after
	// "---" they are one YAML document, of which go-yaml read the first.
	f.Add(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}`+"\n"+`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"}}`, podYAML)
	f.Add(podYAML, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}`+"\n"+`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"}}`)
	f.Add(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}`, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"}}`)
	f.Add("{apiVersion: v1, kind: Node, metadata: {name: n1}}", "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		oa, err := load.Read(strings.NewReader(a), "a")
		if err != nil {
			return
		}
		ob, err := load.Read(strings.NewReader(b), "b")
		if err != nil {
			return
		}
		both, err := load.Read(strings.NewReader(a+"\n---\n"+b), "ab")
		if err != nil {
			return
		}
		require.GreaterOrEqual(t, total(both), total(oa)+total(ob), "objects dropped without an error: %q + %q", a, b)
	})
}

// TestReadStrictDuplicateKeyLine: with Strict, a key twice in a List item
// read item by item is reported at its line in the file (line 11 here);
// go-yaml's "line 8" was relative to the item (a new-user trial, input 25).
// Also a JSON value cut short is reported on the line it starts on (line
// 3 here; it was line 2, where the previous value ends: input 12).
func TestReadStrictDuplicateKeyLine(t *testing.T) {
	in := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p1\n    namespace: ns1\n  spec:\n    nodeName: n1\n    nodeName: n2\n    containers:\n    - name: c\n"
	_, err := load.Options{Strict: true}.Read(strings.NewReader(in), "in.yaml")
	require.ErrorIs(t, err, load.ErrUnknownField)
	var e *load.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 11, e.Line, "%v", err)
	assert.Equal(t, "items[0]", e.Item, "%v", err)
	assert.Contains(t, err.Error(), "line 11:")
	assert.NotContains(t, err.Error(), "line 8:")

	cut := `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"}}` + "\n" +
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"x"},"spec":{"nodeName":"n1","containers":[{"name":"c"}]}}` + "\n" +
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p2","namespace":"x"},"spec":{"containers":[{"name":"c"`
	_, err = load.Read(strings.NewReader(cut), "in.json")
	require.ErrorIs(t, err, load.ErrSyntax)
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 3, e.Line, "%v", err)
	assert.Equal(t, 3, e.Document, "%v", err)
}

// TestYAMLErrorLines: a syntax error inside a multi-line flow collection
// is reported at the offending line. go-yaml's parser names the 0-based
// line of the token it stopped at, which was read as 1-based: one line
// early, often the flow collection's opening line.
func TestYAMLErrorLines(t *testing.T) {
	for _, c := range []struct {
		in   string
		line int
		msg  string
	}{
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p,\n  labels: {a: b},\n  x: [1, 2}\n}\n", 5, "did not find expected ',' or ']'"},
		{"apiVersion: v1\nkind: Pod\nspec: {\n  containers: [\n    {name: a},\n    {name: b, image: [}\n  ]\n}\n", 6, "did not find expected node content"},
		{"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {\n  containers: [{name: c}],\n  nodeName: 5: 6\n}\n", 6, "did not find expected ',' or '}'"},
		{"apiVersion: v1\nkind: Node\nmetadata:\n  name: a\n labels: {}\n", 5, "did not find expected key"},
		// At the end of the text: its last line.
		{"apiVersion: v1\nkind: Node\nmetadata:\n  name: [\n", 4, "did not find expected node content"},
		// On the first line go-yaml names no line: the document's.
		{"---\n{a: [}\n", 2, "did not find expected node content"},
		// A scanner error was right already.
		{"apiVersion: v1\nkind: Node\nmetadata: {name: a}\nx: y: z\n", 4, "mapping values are not allowed in this context"},
	} {
		_, err := load.Read(strings.NewReader(nodeYAML+"---\n"+c.in), "in.yaml")
		require.ErrorIs(t, err, load.ErrSyntax, c.in)
		var e *load.Error
		require.ErrorAs(t, err, &e)
		assert.Equal(t, 12+c.line, e.Line, "%q: %v", c.in, err)
		assert.Contains(t, err.Error(), c.msg, c.in)
	}
}
