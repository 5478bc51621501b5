package openb

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

// Mode says what a reader does with a malformed row.
type Mode uint8

const (
	// Strict fails the whole read at the first malformed row.
	Strict Mode = iota
	// Lenient skips malformed rows and returns them as a list of [*Error]
	// next to the rows it could read. Problems with the file as a whole (it
	// cannot be read, the header lacks a column) still fail the read.
	Lenient
)

// Sentinel errors, wrapped by every [*Error]; test with errors.Is.
var (
	// ErrIO: the input could not be read.
	ErrIO = errors.New("openb: cannot read input")
	// ErrHeader: the header row is missing, lacks a required column or
	// names a column twice.
	ErrHeader = errors.New("openb: bad header")
	// ErrSyntax: a row is not valid CSV or has a different number of
	// fields from the header.
	ErrSyntax = errors.New("openb: malformed CSV row")
	// ErrValue: a field does not hold what its column means (an integer
	// that is not one, is negative or out of range, an unknown QoS or
	// phase, an empty required value).
	ErrValue = errors.New("openb: bad value")
	// ErrDuplicate: a name (sn or name column) repeats an earlier row's.
	ErrDuplicate = errors.New("openb: duplicate name")
)

// Error locates one problem in a CSV file.
type Error struct {
	// File is the path, or the name given to the reader.
	File string
	// Line is the 1-based line of the row (of the field, for a quoted field
	// spanning lines); 1 for the header; 0 when unknown.
	Line int
	// Column is the header name of the offending column, or "" for a
	// problem with the whole row.
	Column string
	// Err wraps one of the sentinel errors and says what is wrong.
	Err error
}

// Error formats as "file:line: column name: cause".
func (e *Error) Error() string {
	s := e.File
	if e.Line > 0 {
		s += ":" + strconv.Itoa(e.Line)
	}
	if e.Column != "" {
		s += ": column " + e.Column
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// table reads a CSV file with a header row and gives access to fields by
// column name, with errors that carry file, line and column.
type table struct {
	file   string
	mode   Mode
	r      *csv.Reader
	header []string
	col    map[string]int // header name -> index
	rec    []string       // current record
	err    *Error         // first problem in the current record
	bad    []*Error       // Lenient: the skipped rows' errors
}

// newTable reads the header and checks that every required column is
// present exactly once. Columns not asked for are ignored.
func newTable(r io.Reader, file string, mode Mode, required []string) (*table, error) {
	t := &table{file: file, mode: mode, r: csv.NewReader(r)}
	t.r.FieldsPerRecord = -1 // checked here, for a clearer message
	t.r.ReuseRecord = true
	header, err := t.r.Read()
	if err == io.EOF {
		return nil, &Error{File: file, Line: 1, Err: fmt.Errorf("%w: empty file, no header row", ErrHeader)}
	}
	if err != nil {
		return nil, t.readError(err)
	}
	t.header = make([]string, len(header))
	t.col = make(map[string]int, len(header))
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff") // a UTF-8 byte-order mark
		}
		h = strings.TrimSpace(h)
		if _, dup := t.col[h]; dup {
			return nil, &Error{File: file, Line: 1, Column: h, Err: fmt.Errorf("%w: column %q appears twice", ErrHeader, h)}
		}
		t.header[i] = h
		t.col[h] = i
	}
	for _, name := range required {
		if _, ok := t.col[name]; !ok {
			return nil, &Error{File: file, Line: 1, Column: name,
				Err: fmt.Errorf("%w: no column %q (header: %s)", ErrHeader, name, strings.Join(t.header, ","))}
		}
	}
	return t, nil
}

// has reports whether the header has the column.
func (t *table) has(column string) bool {
	_, ok := t.col[column]
	return ok
}

// next advances to the next well-formed record. It returns false at the
// end of the input, or with a non-nil error when the read must stop (any
// problem in Strict mode, an I/O error in either mode).
func (t *table) next() (bool, error) {
	for {
		rec, err := t.r.Read()
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			e := t.readError(err)
			if !errors.Is(e, ErrSyntax) || t.mode == Strict {
				return false, e
			}
			t.bad = append(t.bad, e)
			continue
		}
		if len(rec) != len(t.header) {
			line, _ := t.r.FieldPos(0)
			e := &Error{File: t.file, Line: line,
				Err: fmt.Errorf("%w: %d fields, header has %d", ErrSyntax, len(rec), len(t.header))}
			if t.mode == Strict {
				return false, e
			}
			t.bad = append(t.bad, e)
			continue
		}
		t.rec, t.err = rec, nil
		return true, nil
	}
}

// done finishes the current record: it returns the record's first problem
// and whether the caller should stop (Strict) or drop the row (Lenient).
func (t *table) done() (keep bool, stop error) {
	if t.err == nil {
		return true, nil
	}
	if t.mode == Strict {
		return false, t.err
	}
	t.bad = append(t.bad, t.err)
	return false, nil
}

// reject records a problem with the current row (the first one wins).
func (t *table) reject(column string, err error) {
	if t.err != nil {
		return
	}
	line := 0
	if i, ok := t.col[column]; ok {
		line, _ = t.r.FieldPos(i)
	} else {
		line, _ = t.r.FieldPos(0)
	}
	t.err = &Error{File: t.file, Line: line, Column: column, Err: err}
}

// str returns the column's field, or "" when the column is absent.
func (t *table) str(column string) string {
	i, ok := t.col[column]
	if !ok {
		return ""
	}
	return strings.TrimSpace(t.rec[i])
}

// int returns the column's field as an integer in [0, max]; an empty field
// or anything else is a problem recorded against the row.
func (t *table) int(column string, max int64) int64 {
	s := t.str(column)
	if s == "" {
		t.reject(column, fmt.Errorf("%w: empty, want an integer", ErrValue))
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		t.reject(column, fmt.Errorf("%w: %q is out of range [0, %d]", ErrValue, s, max))
	case err != nil:
		t.reject(column, fmt.Errorf("%w: %q is not an integer", ErrValue, s))
	case v < 0:
		t.reject(column, fmt.Errorf("%w: %q is negative", ErrValue, s))
	case v > max:
		t.reject(column, fmt.Errorf("%w: %q is out of range [0, %d]", ErrValue, s, max))
	default:
		return v
	}
	return 0
}

// seconds reads a column of whole seconds that may be absent or empty (ok
// is false then) as a duration.
func (t *table) seconds(column string) (d time.Duration, ok bool) {
	if t.str(column) == "" {
		return 0, false
	}
	return time.Duration(t.int(column, maxSeconds)) * time.Second, true
}

// oneOf returns the column's field if it is "" or one of allowed.
func (t *table) oneOf(column string, allowed ...string) string {
	s := t.str(column)
	if s == "" {
		return ""
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	t.reject(column, fmt.Errorf("%w: %q, want one of %s", ErrValue, s, strings.Join(allowed, ", ")))
	return ""
}

// unique records a duplicate-name problem if name was seen before.
func (t *table) unique(seen map[string]int, column, name string) {
	line, _ := t.r.FieldPos(t.col[column])
	if first, dup := seen[name]; dup {
		t.reject(column, fmt.Errorf("%w: %q, first at line %d", ErrDuplicate, name, first))
		return
	}
	if t.err == nil {
		seen[name] = line
	}
}

func (t *table) readError(err error) *Error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{File: t.file, Line: pe.Line, Err: fmt.Errorf("%w: %w", ErrSyntax, pe.Err)}
	}
	return &Error{File: t.file, Err: fmt.Errorf("%w: %w", ErrIO, err)}
}

// readRows reads every row of a table with the given required columns,
// turning each into a T with row, which also returns the row's name. It
// rejects empty and repeated names (in nameColumn) and applies the mode.
func readRows[T any](r io.Reader, file string, mode Mode, required []string, nameColumn string,
	row func(*table) (T, string)) ([]T, []*Error, error) {
	t, err := newTable(r, file, mode, required)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]int{}
	var out []T
	for {
		ok, err := t.next()
		if err != nil {
			return nil, nil, err
		}
		if !ok {
			return out, t.bad, nil
		}
		v, name := row(t)
		if name == "" {
			t.reject(nameColumn, errEmptyName)
		}
		t.unique(seen, nameColumn, name)
		keep, err := t.done()
		if err != nil {
			return nil, nil, err
		}
		if keep {
			out = append(out, v)
		}
	}
}

var errEmptyName = fmt.Errorf("%w: empty name", ErrValue)

// readFile opens path and hands it to read with path as the file name.
func readFile[T any](path string, mode Mode, read func(io.Reader, string, Mode) ([]T, []*Error, error)) ([]T, []*Error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, &Error{File: path, Err: fmt.Errorf("%w: %w", ErrIO, err)}
	}
	defer f.Close()
	return read(f, path, mode)
}

// Limits that keep derived values inside int64.
const (
	maxMemoryMiB = math.MaxInt64 >> 20                // bytes = MiB << 20
	maxGPUs      = math.MaxInt64 / 1000               // gpu-milli = GPUs × 1000
	maxSeconds   = math.MaxInt64 / int64(time.Second) // a time.Duration
	maxInt       = math.MaxInt64
)
