package load

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
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
			cr := &countingReader{r: strings.NewReader(in)}
			var errs errorList
			got := 0
			void := split("in", cr, false, &errs, func(d document) {
				require.Equal(t, got+1, d.index)
				require.Equal(t, lines[got], d.line, "document %d", d.index)
				require.Contains(t, strings.ReplaceAll(string(d.json), " ", ""), fmt.Sprintf(`"name":"n%d"`, got))
				// The JSON path holds the first value until the second parses.
				limit := ends[min(got+1, docs-1)] + readBuffer + 64<<10
				require.LessOrEqual(t, cr.n, limit, "document %d handed on after reading %d of %d bytes", d.index, cr.n, len(in))
				got++
			})
			require.False(t, void)
			require.Zero(t, errs.total, "%v", errs.err())
			require.Equal(t, docs, got)
			require.Equal(t, len(in), cr.n)
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
				split("in", r, false, &errs, func(document) {})
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
