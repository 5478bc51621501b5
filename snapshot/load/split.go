package load

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"unicode"

	"k8s.io/apimachinery/pkg/util/yaml"
)

// document is one YAML or JSON document of a file, converted to JSON, or
// one item of a YAML List document read item by item (listItems).
type document struct {
	index int    // 1-based position in the file
	line  int    // 1-based line where the document starts
	json  []byte // the document or item as JSON; "null" or empty for an empty document
	// yaml is the YAML text json was converted from, starting at line
	// (nil for JSON input); valid only during the emit call.
	yaml []byte
	// item is the 0-based index of a List item, or -1 for a whole
	// document (for a List read item by item: the List without its items).
	item int
}

// split reads r as a stream of documents and converts each to JSON,
// passing them to emit in order as it goes, using apimachinery's
// util/yaml: one document's text, JSON and objects are held at a time,
// never the whole input. As yaml.NewYAMLOrJSONDecoder does, a stream
// whose first non-blank byte is '{' is read as concatenated JSON values,
// unless its first or second value fails to parse (it is then YAML, for
// example "{a: 1}" or JSON documents separated by "---": the stream is
// read again from its start as YAML, which needs the bytes read until
// then, at most two values); after two JSON values a syntax error is the
// stream's error. Anything else is "---"-separated YAML documents. Syntax
// and read errors are reported through errs; a syntax error in one YAML
// document does not stop the next. It returns true when a stream that
// looked like JSON was re-read as YAML and failed as YAML too: its JSON
// error, the more useful one, is then the only one reported, and the
// caller drops the errors of the objects emitted.
func split(file string, r io.Reader, strict bool, errs *errorList, warns *[]*Error, emit func(document) bool) (void bool) {
	w := &window{r: r, hold: true, line: 1}
	br := bufio.NewReaderSize(w, readBuffer)
	if !looksJSON(br) {
		w.hold = false
		splitYAML(file, br, w, strict, errs, warns, emit)
		return false
	}
	jerr, replay := splitJSON(file, br, w, emit)
	switch {
	case w.err != nil:
		errs.add(ioError(file, w.err))
		return false
	case jerr == nil:
		return false
	case replay == nil:
		errs.add(jerr)
		return false
	}
	// Like YAMLOrJSONDecoder, fall back to YAML: "{a: 1}" is YAML but not
	// JSON. When YAML fails as well, the JSON error is the more useful one.
	var yerrs errorList
	yw := &window{r: io.MultiReader(bytes.NewReader(replay), r), line: 1}
	splitYAML(file, bufio.NewReaderSize(yw, readBuffer), yw, strict, &yerrs, warns, emit)
	switch {
	case yw.err != nil:
		errs.add(ioError(file, yw.err))
	case yerrs.total > 0:
		errs.add(jerr)
		return true
	}
	return false
}

// readBuffer is the size of the buffered reader over an input.
const readBuffer = 64 << 10

func ioError(file string, err error) *Error {
	return &Error{File: file, Err: fmt.Errorf("%w: %w", ErrIO, err)}
}

// looksJSON reports whether the first non-blank byte of br (within its
// buffer) is '{' (yaml.IsJSONBuffer), consuming nothing.
func looksJSON(br *bufio.Reader) bool {
	for n := 512; ; n *= 2 {
		b, err := br.Peek(min(n, readBuffer))
		if len(bytes.TrimLeftFunc(b, unicode.IsSpace)) > 0 || err != nil || n >= readBuffer {
			return yaml.IsJSONBuffer(b)
		}
	}
}

// splitJSON reads a stream of concatenated JSON values, passing each to
// emit. The first value is held until the second parses (or the stream
// ends), and while the stream may still be YAML (a syntax error in its
// first or second value) it returns the error with every byte read so far
// (replay), for the caller to re-read them as YAML; nil replay: the error
// is final.
func splitJSON(file string, br *bufio.Reader, w *window, emit func(document) bool) (jerr *Error, replay []byte) {
	dec := json.NewDecoder(br)
	var held *document
	for n := 0; ; {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			if held != nil {
				emit(*held)
			}
			return nil, nil
		}
		if err != nil {
			e := &Error{File: file, Document: n + 1, Err: fmt.Errorf("%w: %w", ErrSyntax, err)}
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				e.Line = w.lineAt(syn.Offset)
			} else {
				// A value cut short: the line where it starts.
				e.Line = w.lineAt(w.skipSpace(dec.InputOffset()))
			}
			if n < 2 {
				return e, w.buf
			}
			return e, nil
		}
		n++
		end := dec.InputOffset()
		d := document{index: n, line: w.lineAt(end - int64(len(raw))), json: raw, item: -1}
		switch n {
		case 1:
			held = &d
		case 2:
			emit(*held)
			held = nil
			w.hold = false
			fallthrough
		default:
			emit(d)
		}
	}
}

// yamlLine matches the position that go-yaml puts in its messages; the line
// is relative to the document it was given.
var yamlLine = regexp.MustCompile(`^(?:error converting YAML to JSON: )?yaml: line (\d+): (.*)$`)

// splitYAML reads "---"-separated YAML documents from br (reading w) with
// yaml.YAMLReader, which holds one document at a time.
//
// Line numbers: YAMLReader returns every line it consumes, each ended by one
// '\n' (CRLF and a missing final newline are normalised), except the "---"
// line that ends a document. So document k+1 starts at line
// start(k) + lines(k) + 1. After each document w forgets the bytes
// consumed, so it holds the current document's bytes (and the read-ahead),
// where a malformed separator is looked for.
func splitYAML(file string, br *bufio.Reader, w *window, strict bool, errs *errorList, warns *[]*Error, emit func(document) bool) {
	r := yaml.NewYAMLReader(br)
	line := 1
	for index := 1; ; index++ {
		chunk, err := r.Read()
		if err == io.EOF {
			return
		}
		if w.err != nil {
			errs.add(ioError(file, w.err))
			return
		}
		if err != nil {
			// Only a bad separator ("---foo") gets here; the reader has lost
			// its place, so the rest of the file is not read.
			errs.add(&Error{File: file, Line: line + badSeparator(w.buf), Document: index,
				Err: fmt.Errorf("%w: %w", ErrSyntax, err)})
			return
		}
		start := line
		line += bytes.Count(chunk, []byte{'\n'}) + 1
		w.forget(w.end() - int64(br.Buffered()))
		if list, ok := listItems(chunk); ok && itemByItem {
			// A kubectl List: the List without its items, then each item,
			// converted one at a time.
			js, ok := toJSON(file, list.skeleton, start, index, "", strict, errs, warns)
			if !ok || !emit(document{index: index, line: start, json: js, item: -1}) {
				continue
			}
			var text []byte
			for i, it := range list.items {
				text = append(text[:0], chunk[it.from:it.to]...)
				text[it.dash-it.from] = ' '
				if js, ok := toJSON(file, text, start+it.line, index, "items["+strconv.Itoa(i)+"]", strict, errs, warns); ok {
					emit(document{index: index, line: start + it.line, json: js, yaml: text, item: i})
				}
			}
			continue
		}
		if js, ok := toJSON(file, chunk, start, index, "", strict, errs, warns); ok {
			emit(document{index: index, line: start, json: js, yaml: chunk, item: -1})
		}
	}
}

// parserProblems are the messages of go-yaml v2's parser errors
// (go.yaml.in/yaml/v2 parserc.go; its scanner has its own). For these
// (*parser).fail names the offending token's 0-based line as "line N",
// where for scanner errors it adds one: "{a: 1,\n b: [}" was reported at
// line 1, the flow mapping's start, for a '}' on line 2. Left alone, an
// error on the text's first line (0-based 0) names no line and is put at
// the text's start, which is right. TestYAMLErrorLines pins the wording.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"found undefined tag handle":             true,
	"did not find expected node content":     true,
	"did not find expected '-' indicator":    true,
	"did not find expected key":              true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found duplicate %TAG directive":         true,
}

// innerLine matches a line number in go-yaml's messages ("line 8:").
var innerLine = regexp.MustCompile(`\bline (\d+):`)

// toJSON converts YAML text that starts at line start of the file
// (document index, List item item or "") to JSON, reporting a syntax
// error through errs, and a mapping key given twice (of which the
// conversion keeps the last) through errs with strict, through warns
// without.
func toJSON(file string, text []byte, start, index int, item string, strict bool, errs *errorList, warns *[]*Error) (json.RawMessage, bool) {
	// yaml.Unmarshal, not yaml.ToJSON: ToJSON passes through anything
	// that starts with '{' unconverted, and YAML flow mappings do.
	var js json.RawMessage
	err := yaml.Unmarshal(text, &js)
	if err == nil {
		err = trailing(text)
	}
	if err == nil && mayRepeatKey(text) {
		// ToJSON keeps the last of repeated keys; UnmarshalStrict
		// rejects them (a second parse, for the texts mayRepeatKey
		// cannot clear).
		var v any
		if serr := yaml.UnmarshalStrict(text, &v); serr != nil {
			// go-yaml's lines are relative to text: made the file's, and
			// the error's line the first one named.
			e := &Error{File: file, Line: start, Document: index, Item: item}
			first := 0
			msg := innerLine.ReplaceAllStringFunc(serr.Error(), func(m string) string {
				n, _ := strconv.Atoi(innerLine.FindStringSubmatch(m)[1])
				if first == 0 {
					first = start + n - 1
				}
				return "line " + strconv.Itoa(start+n-1) + ":"
			})
			if first > 0 {
				e.Line = first
			}
			e.Err = fmt.Errorf("%w: %s", ErrUnknownField, msg)
			if strict {
				errs.add(e)
				return nil, false
			}
			*warns = append(*warns, e)
		}
	}
	if err != nil {
		e := &Error{File: file, Line: start, Document: index, Item: item}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			if parserProblems[m[2]] {
				n++ // go-yaml's parser gives the 0-based line (parserProblems)
				// At the end of the text (an unclosed '['), the last line.
				n = min(n, max(bytes.Count(bytes.TrimRight(text, "\n"), []byte{'\n'})+1, 1))
			}
			e.Line = start + n - 1
			e.Err = fmt.Errorf("%w: yaml: %s", ErrSyntax, m[2])
		} else {
			e.Err = fmt.Errorf("%w: %w", ErrSyntax, err)
		}
		errs.add(e)
		return nil, false
	}
	return js, true
}

// trailing returns a syntax error when text holds more than the one YAML
// node yaml.Unmarshal converted. go-yaml stops at the end of a top-level
// flow collection and ignores what follows it ("{a: 1}\n{b: 2}",
// "{...}\nkind: Pod", a JSON value then garbage), and at a document end
// marker ("...") ignores the documents after it; either would drop objects
// silently. A text whose first token is '{' or '[' is parsed again inside
// a flow sequence ("[" text "\n]"), where anything after the collection
// but blanks and comments is a syntax error that go-yaml reports with its
// line (the "[" adds no line); a "..." line must be followed only by
// blanks and comments. Cost: a second parse of flow-style documents only,
// O(len(text)) for the others.
func trailing(text []byte) error {
	body, rest, line := text, []byte(nil), 0
	for i, rem := 1, text; len(rem) > 0; i++ {
		l, next, _ := bytes.Cut(rem, []byte{'\n'})
		if after, ok := bytes.CutPrefix(bytes.TrimSuffix(l, []byte{'\r'}), []byte("...")); ok &&
			(len(after) == 0 || after[0] == ' ' || after[0] == '\t') {
			body, rest, line = text[:len(text)-len(rem)], next, i
			break
		}
		rem = next
	}
	for i, rem := line+1, rest; len(rem) > 0; i++ {
		l, next, _ := bytes.Cut(rem, []byte{'\n'})
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return fmt.Errorf("yaml: line %d: content after the document end marker \"...\" on line %d", i, line)
		}
		rem = next
	}
	body = bytes.TrimPrefix(body, []byte("\xef\xbb\xbf"))
	// YAMLReader leaves a leading "---" in the first document: blanked,
	// keeping every line and column.
	sep := bytes.HasPrefix(body, []byte("---")) && (len(body) == 3 || bytes.IndexByte([]byte(" \t\r\n"), body[3]) >= 0)
	rest = body
	if sep {
		rest = body[3:]
	}
	if first := firstToken(rest); first != '{' && first != '[' {
		return nil
	}
	wrapped := make([]byte, 0, len(body)+3)
	wrapped = append(append(append(wrapped, '['), body...), "\n]"...)
	if sep {
		copy(wrapped[1:], "   ")
	}
	var v []json.RawMessage
	if err := yaml.Unmarshal(wrapped, &v); err != nil {
		return err
	}
	if len(v) != 1 {
		return fmt.Errorf("yaml: line 1: %d values where one was expected", len(v))
	}
	return nil
}

// firstToken returns the first byte of text that is not a blank or in a
// comment; 0 when there is none.
func firstToken(text []byte) byte {
	for len(text) > 0 {
		l, next, _ := bytes.Cut(text, []byte{'\n'})
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			return t[0]
		}
		text = next
	}
	return 0
}

// itemByItem turns the item-by-item conversion of List documents on; off
// only in tests, which compare both ways.
var itemByItem = true

// listDoc is a YAML List document cut into its items (listItems).
type listDoc struct {
	skeleton []byte // the document with "items: []" for its items
	items    []span
}

// span is one List item in a document: its bytes [from, to), the offset
// of its "-" and its 0-based line in the document.
type span struct{ from, to, dash, line int }

// listItems recognises the List document kubectl prints
// (`kubectl get ... -o yaml`): block-style YAML whose top-level keys are
// apiVersion: v1, kind: List, an optional metadata mapping and items: a
// block sequence, no key twice, and no anchor (an alias in one item may
// name an anchor in another). Its items can then be converted one at a
// time, each item's lines with its "-" blanked keeping every column, so
// the whole document's YAML tree and JSON are never built. Anything else
// (another kind, flow style, tabs, an unknown top-level key, a
// document-end marker) is not recognised, and the document is converted
// whole. O(len(doc)).
func listItems(doc []byte) (listDoc, bool) {
	if !bytes.HasPrefix(doc, []byte("kind: List\n")) && !bytes.Contains(doc, []byte("\nkind: List\n")) {
		return listDoc{}, false // the common case, a single object: one check
	}
	if hasAnchor(doc) {
		return listDoc{}, false
	}
	var (
		d       listDoc
		skel    []byte
		seen    = map[string]bool{}
		inItems bool
		inMeta  bool
		ind     = -1 // the column of the items' dashes
		col     = -1 // the column of the current item's content
	)
	for i, line := 0, 0; i < len(doc); line++ {
		end := len(doc)
		if j := bytes.IndexByte(doc[i:], '\n'); j >= 0 {
			end = i + j + 1
		}
		l := doc[i:end]
		body := bytes.TrimSuffix(l, []byte{'\n'})
		trimmed := bytes.TrimLeft(body, " ")
		indent := len(body) - len(trimmed)
		switch {
		case len(trimmed) == 0 || trimmed[0] == '#':
			if inItems && len(d.items) > 0 {
				d.items[len(d.items)-1].to = end
			}
		case inItems && (ind < 0 || indent == ind) && trimmed[0] == '-' && (len(trimmed) == 1 || trimmed[1] == ' '):
			ind = indent
			d.items = append(d.items, span{from: i, to: end, dash: i + indent, line: line})
			// The item's content starts after the dash and its blanks, or
			// on the next line that has any.
			col = -1
			if rest := bytes.TrimLeft(trimmed[1:], " "); len(rest) > 0 && rest[0] != '#' {
				col = len(body) - len(rest)
			}
		case inItems && ind >= 0 && indent > ind:
			// A line between the dash and the content's column means
			// something else inside the List than alone: not cut.
			if col < 0 {
				col = indent
			} else if indent < col {
				return listDoc{}, false
			}
			d.items[len(d.items)-1].to = end
		case indent == 0:
			inItems, inMeta = false, false
			k, v, ok := bytes.Cut(body, []byte{':'})
			key, value := string(k), string(bytes.TrimSpace(v))
			if !ok || seen[key] {
				return listDoc{}, false
			}
			seen[key] = true
			switch {
			case key == "apiVersion" && value == "v1", key == "kind" && value == "List":
				skel = append(skel, l...)
			case key == "metadata":
				inMeta = value == ""
				skel = append(skel, l...)
			case key == "items" && value == "":
				inItems = true
				skel = append(skel, "items: []\n"...)
			default:
				return listDoc{}, false
			}
		case inMeta:
			skel = append(skel, l...)
		default:
			return listDoc{}, false
		}
		i = end
	}
	if !seen["kind"] || !seen["apiVersion"] || !seen["items"] {
		return listDoc{}, false
	}
	d.skeleton = skel
	return d, true
}

// hasAnchor reports whether doc may define a YAML anchor: an '&' at the
// start of a line or after a blank, ':', '-', '[', '{' or ',', followed
// by a non-blank. Text in quotes can match too, which only costs the
// item-by-item conversion.
func hasAnchor(doc []byte) bool {
	for i := bytes.IndexByte(doc, '&'); i >= 0; {
		if i+1 < len(doc) && doc[i+1] != ' ' && doc[i+1] != '\n' && (i == 0 || bytes.IndexByte([]byte(" \t\n:-[{,"), doc[i-1]) >= 0) {
			return true
		}
		j := bytes.IndexByte(doc[i+1:], '&')
		if j < 0 {
			break
		}
		i += j + 1
	}
	return false
}

// badSeparator returns the 0-based index, among the lines of data, of the
// first line YAMLReader refuses as a document separator ("---" followed
// by anything but blanks or a comment); 0 when there is none.
func badSeparator(data []byte) int {
	for i := 0; len(data) > 0; i++ {
		l, rest, _ := bytes.Cut(data, []byte{'\n'})
		if after, ok := bytes.CutPrefix(l, []byte("---")); ok {
			if t := bytes.TrimSpace(after); len(t) > 0 && t[0] != '#' {
				return i
			}
		}
		data = rest
	}
	return 0
}

// window is an io.Reader over r that keeps the bytes read from r since
// the last forget (all of them while hold), to count lines at stream
// offsets and to re-read a stream's start. It holds one document and
// the read-ahead, not the input.
type window struct {
	r    io.Reader
	err  error  // the first read error other than io.EOF
	buf  []byte // the bytes from stream offset base on
	base int64
	hold bool // forget nothing
	// cur is the offset lines are counted to: line is its 1-based line.
	cur  int64
	line int
}

func (w *window) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.buf = append(w.buf, p[:n]...)
	if err != nil && err != io.EOF && w.err == nil {
		w.err = err
	}
	return n, err
}

// end is the stream offset after the last byte read.
func (w *window) end() int64 { return w.base + int64(len(w.buf)) }

// lineAt returns the 1-based line of stream offset off, which must not be
// below the last offset asked (it is clamped to the bytes held), and
// forgets the bytes before it. O(bytes since the last call).
func (w *window) lineAt(off int64) int {
	off = min(max(off, w.cur, w.base), w.end())
	w.line += bytes.Count(w.buf[max(w.cur-w.base, 0):off-w.base], []byte{'\n'})
	w.cur = off
	w.forget(off)
	return w.line
}

// skipSpace returns the offset of the first byte at or after off that is
// not JSON whitespace, among the bytes held; the end when there is none.
func (w *window) skipSpace(off int64) int64 {
	for off = max(off, w.base); off < w.end(); off++ {
		switch w.buf[off-w.base] {
		case ' ', '\t', '\r', '\n':
		default:
			return off
		}
	}
	return off
}

// forget drops the bytes before stream offset off, unless hold.
func (w *window) forget(off int64) {
	k := min(off, w.end()) - w.base
	if w.hold || k <= 0 {
		return
	}
	n := copy(w.buf, w.buf[k:])
	w.buf = w.buf[:n]
	w.base += k
	if cap(w.buf) > 1<<20 && cap(w.buf) > 4*n {
		w.buf = append(make([]byte, 0, 2*n), w.buf...) // after a large document
	}
}
