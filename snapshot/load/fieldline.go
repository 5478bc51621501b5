package load

import (
	"bytes"
	"strconv"
	"strings"
)

// pathSeg is one step of a field path: a mapping key, or a sequence
// index (key == "" and index ≥ 0).
type pathSeg struct {
	key   string
	index int
}

// parseFieldPath splits a field path in the Kubernetes JSON path style
// ("spec.containers[0].resources.requests[cpu]",
// "metadata.labels[kubernetes.io/hostname]") into its steps: names
// separated by '.', and bracketed steps, an index when all digits, else a
// key (dots and all). ok is false for a path it cannot read (empty steps,
// an unclosed bracket).
func parseFieldPath(field string) (segs []pathSeg, ok bool) {
	for i := 0; i < len(field); {
		switch field[i] {
		case '.':
			if i == 0 || i+1 == len(field) || field[i+1] == '.' || field[i+1] == '[' {
				return nil, false
			}
			i++
		case '[':
			end := strings.IndexByte(field[i:], ']')
			if end <= 1 {
				return nil, false
			}
			in := field[i+1 : i+end]
			if n, err := strconv.Atoi(in); err == nil && n >= 0 && in[0] != '+' {
				segs = append(segs, pathSeg{index: n})
			} else {
				segs = append(segs, pathSeg{key: in, index: -1})
			}
			i += end + 1
		default:
			end := strings.IndexAny(field[i:], ".[")
			if end < 0 {
				end = len(field) - i
			}
			segs = append(segs, pathSeg{key: field[i : i+end], index: -1})
			i += end
		}
	}
	return segs, len(segs) > 0
}

// fieldLine returns the 1-based line of text (one YAML document, or one
// List item) where the field named by the path field is, or, when the
// text does not spell the whole path (the field is missing, or given in a
// flow collection such as "requests: {cpu: -1}"), where its longest
// leading part that the text spells is; ok is false when not even the
// first step is found. It follows block-style mappings and sequences line
// by line, as mayRepeatKey does, by indentation: a key's column, a
// sequence item's dash column (a sequence may sit at its key's column, as
// kubectl prints it). It stops at what it does not follow — a flow
// collection opened and not closed on its line, a tab, a document marker
// after the start, a key it cannot read plainly — keeping what it found
// before; a text with a line break other than LF and CRLF (oddBreak) is
// not read at all. A key given twice is found at its last occurrence,
// whose value go-yaml keeps. Plain and simply quoted keys (no escapes) are
// compared as text. O(len(text) + depth per line); allocates the parsed
// path and the stack.
func fieldLine(text []byte, field string) (line int, ok bool) {
	want, parsed := parseFieldPath(field)
	if !parsed || oddBreak(text) {
		return 0, false // a line break for YAML, not for the loader's count
	}
	type frame struct {
		col  int
		seg  pathSeg
		item bool // a sequence item: seg.index counts the items
	}
	var stack []frame
	best := 0 // steps matched by the best line so far
	// matches reports how many leading steps of want the stack spells.
	matches := func() int {
		n := 0
		for n < len(stack) && n < len(want) && stack[n].seg == want[n] {
			n++
		}
		if n < len(stack) {
			return 0 // the stack leaves want's path: no prefix of it
		}
		return n
	}
	first := true
	lines := newYAMLLines(text)
	for {
		ln, content, col, more := lines.next()
		if !more {
			break
		}
		no := lines.no
		if len(content) == 0 || content[0] == '#' {
			continue
		}
		if bytes.IndexByte(ln, '\t') >= 0 {
			break
		}
		if col == 0 && (bytes.HasPrefix(content, []byte("---")) || bytes.HasPrefix(content, []byte("..."))) {
			if !first || !bytes.HasPrefix(content, []byte("---")) {
				break
			}
			first = false
			continue
		}
		first = false
		dash := -1
		for len(content) > 0 && content[0] == '-' && (len(content) == 1 || content[1] == ' ') {
			dash = col
			// A sequence item at the dash's column: the next item of the
			// sequence there, or the first of one under the key above.
			for len(stack) > 0 && stack[len(stack)-1].col > col {
				stack = stack[:len(stack)-1]
			}
			if top := len(stack) - 1; top >= 0 && stack[top].item && stack[top].col == col {
				stack[top].seg.index++
			} else {
				stack = append(stack, frame{col: col, seg: pathSeg{index: 0}, item: true})
			}
			if n := matches(); n > 0 && n >= best {
				best, line = n, no // the last wins, as go-yaml keeps a repeated key's last value
			}
			after := bytes.TrimLeft(content[1:], " ")
			col += len(content) - len(after)
			content = after
		}
		if len(content) == 0 || content[0] == '#' {
			continue // "-" alone: the item's content is on later lines
		}
		key, value, isKey := cutKey(content)
		if !isKey {
			if dash >= 0 && blockHeader(content) {
				lines.block = dash
				continue
			}
			if !plainValue(content) {
				break
			}
			continue // a scalar: a sequence item or a continuation line
		}
		k, readable := keyText(key)
		if !readable {
			break
		}
		if blockHeader(value) {
			lines.block = col
		}
		for len(stack) > 0 && stack[len(stack)-1].col >= col {
			stack = stack[:len(stack)-1]
		}
		stack = append(stack, frame{col: col, seg: pathSeg{key: k, index: -1}})
		if n := matches(); n > 0 && n >= best {
			best, line = n, no
		}
		if !plainValue(value) && !flowOnLine(value) {
			break // a flow collection going on to later lines
		}
	}
	return line, best > 0
}

// flowOnLine reports whether v is a flow collection closed on its line
// ("{cpu: 2}", "[a, {b: c}]  # note"): brackets balance outside quotes
// and nothing but a comment follows the last.
func flowOnLine(v []byte) bool {
	if len(v) == 0 || v[0] != '{' && v[0] != '[' {
		return false
	}
	depth := 0
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(v) && v[j] != c {
				if c == '"' && v[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(v) {
				return false
			}
			i = j
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth--; depth < 0 {
				return false
			}
			if depth == 0 {
				rest := bytes.TrimLeft(v[i+1:], " ")
				return len(rest) == 0 || rest[0] == '#'
			}
		}
	}
	return false
}

// keyText returns the text of a mapping key: a plain key as it is, a
// quoted one without its quotes when it holds no escape; ok is false for
// other keys (escapes, complex keys, anchors, tags, aliases).
func keyText(key []byte) (string, bool) {
	if len(key) == 0 {
		return "", false
	}
	switch key[0] {
	case '"':
		if len(key) >= 2 && key[len(key)-1] == '"' && bytes.IndexAny(key[1:len(key)-1], "\"\\") < 0 {
			return string(key[1 : len(key)-1]), true
		}
		return "", false
	case '\'':
		if len(key) >= 2 && key[len(key)-1] == '\'' && bytes.IndexByte(key[1:len(key)-1], '\'') < 0 {
			return string(key[1 : len(key)-1]), true
		}
		return "", false
	case '?', '&', '*', '!', '{', '[', '|', '>', '%', '@', '`':
		return "", false
	}
	return string(key), true
}
