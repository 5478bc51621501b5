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

	"k8s.io/apimachinery/pkg/util/yaml"
)

// document is one YAML or JSON document of a file, converted to JSON.
type document struct {
	index int    // 1-based position in the file
	line  int    // 1-based line where it starts
	json  []byte // the document as JSON; "null" or empty for an empty document
}

// split cuts data into documents and converts each to JSON, passing
// them to emit in order as it goes (one document is held at a time), using
// apimachinery's util/yaml: a stream whose first non-blank byte is '{' is
// read as concatenated JSON values (the rule of yaml.NewYAMLOrJSONDecoder);
// anything else, or JSON that fails to parse but is valid YAML, as
// "---"-separated YAML documents. Syntax errors are reported through errs,
// and a syntax error in one YAML document does not stop the next.
func split(file string, data []byte, strict bool, errs *errorList, emit func(document)) {
	if !yaml.IsJSONBuffer(data) {
		splitYAML(file, data, strict, errs, emit)
		return
	}
	// The stream is checked whole before any document is emitted, since
	// a syntax error anywhere makes it YAML.
	jerr := splitJSON(file, data, nil)
	if jerr == nil {
		_ = splitJSON(file, data, emit)
		return
	}
	// Like YAMLOrJSONDecoder, fall back to YAML: "{a: 1}" is YAML but not
	// JSON. When YAML fails as well, the JSON error is the more useful one.
	var yerrs errorList
	if splitYAML(file, data, strict, &yerrs, func(document) {}); yerrs.total == 0 {
		splitYAML(file, data, strict, &yerrs, emit)
		return
	}
	errs.add(jerr)
}

// splitJSON reads a stream of concatenated JSON values, passing each to
// emit (nil: only check the syntax).
func splitJSON(file string, data []byte, emit func(document)) *Error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var (
		n     int
		lines lineCounter
	)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			e := &Error{File: file, Document: n + 1, Err: fmt.Errorf("%w: %w", ErrSyntax, err)}
			var syn *json.SyntaxError
			if errors.As(err, &syn) {
				e.Line = lines.at(data, int(syn.Offset))
			} else {
				e.Line = lines.at(data, int(dec.InputOffset()))
			}
			return e
		}
		n++
		if emit != nil {
			end := int(dec.InputOffset())
			start := end - len(raw)
			emit(document{index: n, line: lines.at(data, start), json: raw})
		}
	}
}

// yamlLine matches the position that go-yaml puts in its messages; the line
// is relative to the document it was given.
var yamlLine = regexp.MustCompile(`^(?:error converting YAML to JSON: )?yaml: line (\d+): (.*)$`)

// splitYAML reads "---"-separated YAML documents with yaml.YAMLReader.
//
// Line numbers: YAMLReader returns every line it consumes, each ended by one
// '\n' (CRLF and a missing final newline are normalised), except the "---"
// line that ends a document. So document k+1 starts at line
// start(k) + lines(k) + 1.
func splitYAML(file string, data []byte, strict bool, errs *errorList, emit func(document)) {
	r := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	line := 1
	for index := 1; ; index++ {
		chunk, err := r.Read()
		if err == io.EOF {
			return
		}
		if err != nil {
			// Only a bad separator ("---foo") gets here; the reader has lost
			// its place, so the rest of the file is not read.
			errs.add(&Error{File: file, Line: separatorLine(data, line), Document: index,
				Err: fmt.Errorf("%w: %w", ErrSyntax, err)})
			return
		}
		start := line
		line += bytes.Count(chunk, []byte{'\n'}) + 1
		// yaml.Unmarshal, not yaml.ToJSON: ToJSON passes through anything
		// that starts with '{' unconverted, and YAML flow mappings do.
		var js json.RawMessage
		err = yaml.Unmarshal(chunk, &js)
		if err == nil && strict {
			// ToJSON keeps the last of duplicate keys; UnmarshalStrict
			// rejects them.
			var v any
			if serr := yaml.UnmarshalStrict(chunk, &v); serr != nil {
				errs.add(&Error{File: file, Line: start, Document: index,
					Err: fmt.Errorf("%w: %w", ErrUnknownField, serr)})
				continue
			}
		}
		if err != nil {
			e := &Error{File: file, Line: start, Document: index}
			if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
				n, _ := strconv.Atoi(m[1])
				e.Line = start + n - 1
				e.Err = fmt.Errorf("%w: yaml: %s", ErrSyntax, m[2])
			} else {
				e.Err = fmt.Errorf("%w: %w", ErrSyntax, err)
			}
			errs.add(e)
			continue
		}
		emit(document{index: index, line: start, json: js})
	}
}

// separatorLine returns the first line at or after from that starts with
// "---", which is where YAMLReader reports a malformed separator.
func separatorLine(data []byte, from int) int {
	line := 1
	for len(data) > 0 {
		if line >= from && bytes.HasPrefix(data, []byte("---")) {
			return line
		}
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		data = data[i+1:]
		line++
	}
	return from
}

// lineCounter turns increasing byte offsets into 1-based line numbers in
// O(total bytes) over all calls.
type lineCounter struct {
	off, line int
}

func (c *lineCounter) at(data []byte, off int) int {
	if c.line == 0 {
		c.line = 1
	}
	off = min(max(off, 0), len(data))
	if off < c.off {
		c.off, c.line = 0, 1
	}
	c.line += bytes.Count(data[c.off:off], []byte{'\n'})
	c.off = off
	return c.line
}
