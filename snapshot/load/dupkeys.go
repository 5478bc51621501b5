package load

import "bytes"

// mayRepeatKey reports whether the YAML text may hold a mapping key twice,
// which go-yaml resolves silently (the last wins) when it converts YAML
// to JSON; false means it surely does not. It follows block-style
// mappings line by line, a scope per key column: a key is compared with
// the keys of its scope; a deeper key opens a scope, a shallower one
// closes the deeper scopes, and a key after "- " opens a new one (a
// sequence item). It answers true, the safe side, on whatever it does not
// follow: flow collections other than "{}" and "[]", tabs, quoted or
// complex keys, merge keys ("<<"), keys YAML may resolve to a non-string
// (a number, y/n/yes/no/on/off/true/false/null/~, in any case, or a
// leading '.', '+' or '-'), quoted values not closed on their line,
// document markers after the start, and line breaks other than LF and
// CRLF (oddBreak). The lines of a block scalar ("|" or
// ">"), deeper than its key, are its text and skipped.
// Cost: O(len(text) + keys per mapping squared) time; allocates the
// scope stack and key lists (sub-slices of text), not the keys.
func mayRepeatKey(text []byte) bool {
	type scope struct {
		col  int
		keys [][]byte // sub-slices of text
	}
	if oddBreak(text) {
		return true
	}
	stack := make([]scope, 0, 8)
	first := true
	lines := newYAMLLines(text)
	for {
		line, content, col, more := lines.next()
		if !more {
			break
		}
		if bytes.IndexByte(line, '\t') >= 0 {
			return true
		}
		if len(content) == 0 || content[0] == '#' {
			continue
		}
		if col == 0 && (bytes.HasPrefix(content, []byte("---")) || bytes.HasPrefix(content, []byte("..."))) {
			if !first || !bytes.HasPrefix(content, []byte("---")) {
				return true
			}
			first = false
			continue
		}
		first = false
		item, dash := false, col
		for len(content) > 0 && content[0] == '-' && (len(content) == 1 || content[1] == ' ') {
			item = true
			after := bytes.TrimLeft(content[1:], " ")
			col += len(content) - len(after)
			content = after
		}
		if len(content) == 0 || content[0] == '#' {
			// "-" alone: the item's content starts on a later line,
			// deeper than the dash: a key there opens a scope anyway.
			continue
		}
		key, value, ok := cutKey(content)
		if !ok {
			if item && blockHeader(content) {
				lines.block = dash
				continue
			}
			if !plainValue(content) {
				return true
			}
			continue // a scalar: a sequence item or a continuation line
		}
		if !plainKey(key) || !plainValue(value) {
			return true
		}
		if blockHeader(value) {
			lines.block = col
		}
		for len(stack) > 0 && (stack[len(stack)-1].col > col || item && stack[len(stack)-1].col == col) {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 || stack[len(stack)-1].col < col {
			stack = append(stack, scope{col: col})
		}
		top := &stack[len(stack)-1]
		for _, k := range top.keys {
			if bytes.Equal(k, key) {
				return true
			}
		}
		top.keys = append(top.keys, key)
	}
	return false
}

// oddBreak reports whether text holds a line break go-yaml v2 reads and
// yamlLines does not: a carriage return not followed by a line feed,
// NEL (U+0085), LINE SEPARATOR (U+2028) or PARAGRAPH SEPARATOR (U+2029).
func oddBreak(text []byte) bool {
	if bytes.Contains(text, []byte("\u0085")) || bytes.Contains(text, []byte("\u2028")) || bytes.Contains(text, []byte("\u2029")) {
		return true
	}
	for i := bytes.IndexByte(text, '\r'); i >= 0; {
		if i+1 == len(text) || text[i+1] != '\n' {
			return true
		}
		j := bytes.IndexByte(text[i+1:], '\r')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// yamlLines walks YAML text line by line for the block-style scanners
// (mayRepeatKey, fieldLine), skipping the text of block scalars.
type yamlLines struct {
	rest []byte
	no   int // the 1-based number of the last line returned
	// block: in a block scalar, the column its lines are deeper than
	// (set by the caller on its header), else -1
	block int
}

func newYAMLLines(text []byte) *yamlLines { return &yamlLines{rest: text, block: -1} }

// next returns the next line that is not a block scalar's text, without
// its line break (and a byte order mark on line 1), its content after
// the indentation and the indentation's width; more is false at the end.
func (s *yamlLines) next() (line, content []byte, col int, more bool) {
	for len(s.rest) > 0 {
		line, s.rest, _ = bytes.Cut(s.rest, []byte{'\n'})
		s.no++
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if s.no == 1 {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
		}
		content = bytes.TrimLeft(line, " ")
		col = len(line) - len(content)
		if s.block >= 0 {
			if len(bytes.TrimSpace(content)) == 0 || col > s.block {
				continue // the block scalar's text, tabs and all
			}
			s.block = -1
		}
		return line, content, col, true
	}
	return nil, nil, 0, false
}

// blockHeader reports whether v is the header of a block scalar ("|",
// ">-", "|2+ # comment"), whose text is on the lines below, deeper than
// its key (or its item's dash).
func blockHeader(v []byte) bool {
	if len(v) == 0 || v[0] != '|' && v[0] != '>' {
		return false
	}
	i := 1
	for i < len(v) && (isDigit(v[i]) || v[i] == '+' || v[i] == '-') {
		i++
	}
	for i < len(v) && v[i] == ' ' {
		i++
	}
	return i == len(v) || v[i] == '#'
}

// cutKey splits "key: value" or "key:" (the key trimmed); ok is false
// when content holds no ": " and does not end in ':'.
func cutKey(content []byte) (key, value []byte, ok bool) {
	i := bytes.Index(content, []byte(": "))
	switch {
	case i >= 0:
		return bytes.TrimRight(content[:i], " "), bytes.TrimLeft(content[i+2:], " "), true
	case content[len(content)-1] == ':':
		return bytes.TrimRight(content[:len(content)-1], " "), nil, true
	}
	return nil, nil, false
}

// plainKey reports whether key is a plain YAML scalar that go-yaml reads
// as the string it spells, so that two keys are equal exactly when their
// text is.
func plainKey(key []byte) bool {
	if len(key) == 0 || bytes.IndexByte([]byte("\"'?{}[],&*!|>%@`#.+-~0123456789<"), key[0]) >= 0 {
		return false
	}
	for _, w := range yamlWords {
		if bytes.EqualFold(key, []byte(w)) {
			return false
		}
	}
	return true
}

// yamlWords are the plain scalars go-yaml v2 resolves to booleans or
// null, in any case.
var yamlWords = []string{"y", "n", "yes", "no", "on", "off", "true", "false", "null"}

// plainValue reports whether a value (or a whole line that is no key)
// ends on its line as far as keys go: a quoted scalar it starts with is
// closed there; unquoted, it holds no '{' or '[' (a flow collection,
// perhaps after an anchor or tag), or is "{}" or "[]".
func plainValue(v []byte) bool {
	if len(v) == 0 {
		return true
	}
	switch v[0] {
	case '"':
		for i := 1; i < len(v); i++ {
			switch v[i] {
			case '\\':
				i++
			case '"':
				return true
			}
		}
		return false
	case '\'':
		for i := 1; i < len(v); i++ {
			if v[i] == '\'' {
				if i+1 < len(v) && v[i+1] == '\'' {
					i++
					continue
				}
				return true
			}
		}
		return false
	}
	// Unquoted: no flow collection, not even after an anchor or tag.
	t := bytes.TrimRight(v, " ")
	return string(t) == "{}" || string(t) == "[]" || bytes.IndexAny(v, "{[") < 0
}
