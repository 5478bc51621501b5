package load

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// CountingReader counts the bytes read through it (exported for the
// package's external tests).
type CountingReader struct {
	R io.Reader
	N int
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += n
	return n, err
}

// TestSplitStreams: split hands each document on before reading much past
// it (one read buffer plus the JSON decoder's read-ahead), for YAML and
// for JSON streams of 3,000 documents (~0.5 MB), and gives each its line
// and index; before, the whole input was read first.
func TestSplitStreams(t *testing.T) {
	const docs = 3000
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			var b strings.Builder
			var ends, lines []int
			line := 1
			for i := range docs {
				var d string
				if format == "yaml" {
					d = fmt.Sprintf("apiVersion: v1\nkind: Node\nmetadata:\n  name: n%d\n  labels: {zone: z%d}\n---\n", i, i%7)
				} else {
					d = fmt.Sprintf("{\"apiVersion\": \"v1\",\n \"kind\": \"Node\",\n \"metadata\": {\"name\": \"n%d\", \"labels\": {\"zone\": \"z%d\"}}}\n", i, i%7)
				}
				lines = append(lines, line)
				line += strings.Count(d, "\n")
				b.WriteString(d)
				ends = append(ends, b.Len())
			}
			in := b.String()
			cr := &CountingReader{R: strings.NewReader(in)}
			var errs errorList
			got := 0
			void := split("in", cr, false, &errs, new([]*Error), func(d document) bool {
				require.Equal(t, got+1, d.index)
				require.Equal(t, lines[got], d.line, "document %d", d.index)
				require.Contains(t, strings.ReplaceAll(string(d.json), " ", ""), fmt.Sprintf(`"name":"n%d"`, got))
				// The JSON path holds the first value until the second parses.
				limit := ends[min(got+1, docs-1)] + readBuffer + 64<<10
				require.LessOrEqual(t, cr.N, limit, "document %d handed on after reading %d of %d bytes", d.index, cr.N, len(in))
				got++
				return true
			})
			require.False(t, void)
			require.Zero(t, errs.total, "%v", errs.err())
			require.Equal(t, docs, got)
			require.Equal(t, len(in), cr.N)
		})
	}
}

// TestSplitLinesAcrossBuffers: errors deep in a stream (past several read
// buffers) carry the line of the whole input, for a YAML syntax error, a
// bad separator and a JSON syntax error after many values.
func TestSplitLinesAcrossBuffers(t *testing.T) {
	node := "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n---\n"
	jnode := "{\"apiVersion\": \"v1\",\n \"kind\": \"Node\"}\n"
	for name, tc := range map[string]struct {
		in         string
		line, doc  int
		wantPrefix string
	}{
		"yaml syntax":   {strings.Repeat(node, 5000) + "kind: Node\n  metadata: x\n", 20002, 5001, "yaml: "},
		"bad separator": {strings.Repeat(node, 5000) + "kind: Node\n---x\n", 20002, 5001, "invalid Yaml document separator"},
		"json syntax":   {strings.Repeat(jnode, 5000) + "{\"kind\":\n ]}", 10002, 5001, "invalid character"},
	} {
		t.Run(name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tc.in), &oneByte{bytes.NewReader([]byte(tc.in))}} {
				var errs errorList
				split("in", r, false, &errs, new([]*Error), func(document) bool { return true })
				require.Equal(t, 1, errs.total, "%v", errs.err())
				e := errs.errs[0].(*Error)
				require.Equal(t, tc.line, e.Line, "%v", e)
				require.Equal(t, tc.doc, e.Document, "%v", e)
				require.ErrorIs(t, e, ErrSyntax)
				require.Contains(t, e.Error(), tc.wantPrefix)
			}
		})
	}
}

type oneByte struct{ r io.Reader }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// listYAML is kubectl's List shape: nodes, a pod with a block scalar and a
// comment at column 0 inside an item, and a Service (kept for the Cache).
const listYAML = `apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: a
    labels: {zone: z1}
  status:
    allocatable: {cpu: "4", memory: 8Gi}
-   apiVersion: v1
    kind: Node
    metadata: {name: b}

- apiVersion: v1
  kind: Pod
  metadata:
    name: p
    namespace: shop
    annotations:
      note: |
        two
        lines
# a comment at column 0
  spec:
    nodeName: a
    containers:
    - name: c
      resources: {requests: {cpu: 100m}}
- apiVersion: v1
  kind: Service
  metadata: {name: s, namespace: shop}
kind: List
metadata:
  resourceVersion: ""
`

// TestListItems: kubectl's List is cut into its items; shapes where
// cutting could change the meaning are converted whole.
func TestListItems(t *testing.T) {
	d, ok := listItems([]byte(listYAML))
	require.True(t, ok)
	require.Len(t, d.items, 4)
	require.Equal(t, "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n", string(d.skeleton))
	require.Equal(t, []int{2, 9, 13, 28}, []int{d.items[0].line, d.items[1].line, d.items[2].line, d.items[3].line})
	for name, in := range map[string]string{
		"anchor":         strings.Replace(listYAML, "labels: {zone: z1}", "labels: &l {zone: z1}", 1),
		"flow items":     "apiVersion: v1\nkind: List\nitems: [{kind: Node}]\n",
		"unknown key":    listYAML + "extra: 1\n",
		"twice":          listYAML + "kind: List\n",
		"other kind":     strings.Replace(listYAML, "kind: List", "kind: NodeList", 1),
		"quoted version": strings.Replace(listYAML, "apiVersion: v1\nitems", "apiVersion: \"v1\"\nitems", 1),
		"tab":            strings.Replace(listYAML, "kind: List", "kind: List\n\tx: 1", 1),
	} {
		_, ok := listItems([]byte(in))
		require.False(t, ok, name)
	}
}

// readBothWays reads in with the item-by-item conversion on and off.
func readBothWays(t *testing.T, in []byte, strict bool) {
	t.Helper()
	defer func() { itemByItem = true }()
	read := func(on bool) (Objects, error) {
		itemByItem = on
		return Options{Strict: strict}.Read(bytes.NewReader(in), "in")
	}
	whole, werr := read(false)
	items, ierr := read(true)
	require.Equal(t, werr == nil, ierr == nil, "whole: %v\nitem by item: %v", werr, ierr)
	if werr != nil {
		// The item-by-item path reports a syntax error at the item's
		// line, the whole path at the document's; other errors match.
		// Other errors match but for their lines: the item's line item
		// by item, the document's whole.
		if !errors.Is(werr, ErrSyntax) && !errors.Is(werr, ErrUnknownField) && !errors.Is(ierr, ErrSyntax) && !errors.Is(ierr, ErrUnknownField) {
			require.Equal(t, anyLine.ReplaceAllString(werr.Error(), ":_: document"), anyLine.ReplaceAllString(ierr.Error(), ":_: document"))
		}
		return
	}
	require.Equal(t, whole, items)
}

// anyLine matches the line of a place in an error message.
var anyLine = regexp.MustCompile(`:\d+: document`)

// FuzzListItemByItem: reading a List document item by item gives exactly
// what converting it whole gives (the same objects, the same errors but
// for where a syntax error is reported).
func FuzzListItemByItem(f *testing.F) {
	for _, seed := range []string{
		listYAML,
		strings.Replace(listYAML, "cpu: 100m", "cpu: -1", 1),
		strings.Replace(listYAML, "name: b", "name: a", 1),
		strings.Replace(listYAML, "    kind: Node\n    metadata: {name: b}", "    kind: Node\n   metadata: {name: b}", 1),
		strings.Replace(listYAML, "metadata:\n  resourceVersion: \"\"", "metadata:\n  resourceVersion: \"\"\n  bogus: 1", 1),
		"apiVersion: v1\nkind: List\nitems:\n- kind: Node\n  apiVersion: v1\n  metadata: {name: x}\n  metadata: {name: y}\n",
		"apiVersion: v1\nkind: List\nitems:\n-\n  kind: Node\n  apiVersion: v1\n  metadata: {name: x}\n- null\n- - 1\n",
		"kind: List\napiVersion: v1\nmetadata: 5\nitems:\n- {kind: Node, apiVersion: v1, metadata: {name: x}}\n",
		"apiVersion: v1\nitems:\nkind: List\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: a}}\n  {apiVersion: v1, kind: Node, metadata: {name: b}}\n",
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Node\n  metadata: {name: a}\n...\napiVersion: v1\nkind: Node\nmetadata: {name: b}\n",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	f.Fuzz(readBothWays)
}
