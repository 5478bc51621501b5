package load

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"

	"github.com/schedkit/schedkit/internal/quantity"
)

// Quantities are screened before typed decoding: apimachinery's
// ParseQuantity, which the decoder calls on every quantity field, does
// not return for minutes on some exponents ("1e-999999999",
// "1e9919999199999999"; internal/quantity.Screen says which), so a
// document holding one would hang the loader inside the decoder.
//
// maySlowQuantity is the cheap test every document passes through:
// whether js holds a JSON string or number that, trimmed, is a quantity
// with an exponent Screen could refuse (at least minScreenedDigits digits
// after its leading zeros): [+-] digits [. digits] (e|E) [+-] digits,
// between a quote, ':', ',', '[' or a blank and a quote, ',', '}', ']'
// or a blank (or a non-ASCII byte). So a hexadecimal digest such as
// "sha256:3e48291f..." does not trigger the walk. Only a document that passes is walked field by
// field (quantityFields), which costs about a decode. O(len(js)), no
// allocation.
func maySlowQuantity(js []byte) bool {
	for i := 1; i < len(js); i++ {
		if js[i]|0x20 != 'e' || !(isDigit(js[i-1]) || js[i-1] == '.') {
			continue
		}
		// The mantissa, back to where the value starts.
		k := i - 1
		for k > 0 && (isDigit(js[k-1]) || js[k-1] == '.') {
			k--
		}
		if k > 0 && (js[k-1] == '-' || js[k-1] == '+') {
			k--
		}
		if k == 0 || !startsValue(js[k-1]) {
			continue
		}
		j := i + 1
		if j < len(js) && (js[j] == '-' || js[j] == '+') {
			j++
		}
		for j < len(js) && js[j] == '0' {
			j++
		}
		n := 0
		for j+n < len(js) && isDigit(js[j+n]) {
			n++
		}
		if n >= minScreenedDigits && (j+n == len(js) || endsValue(js[j+n])) {
			return true
		}
	}
	return false
}

// startsValue and endsValue: bytes of non-ASCII runes count too, for the
// Unicode blanks that Quantity.UnmarshalJSON trims.
func startsValue(c byte) bool {
	switch c {
	case '"', ':', ',', '[', ' ', '\t', '\n', '\r':
		return true
	}
	return c >= 0x80
}

func endsValue(c byte) bool {
	switch c {
	case '"', ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return c >= 0x80
}

// minScreenedDigits: every exponent Screen refuses is beyond
// ±MaxExponent, so it has at least this many digits after its leading
// zeros.
var minScreenedDigits = len(strconv.Itoa(quantity.MaxExponent + 1))

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// slowQuantities returns a problem for every quantity field of js
// (a JSON object that the decoder would decode as a value of type t)
// that quantity.Screen refuses, in document order.
func slowQuantities(js []byte, t reflect.Type) []problem {
	var ps []problem
	quantityFields(js, t, func(path string, v json.Token) {
		if text, ok := quantityText(v); ok {
			if err := quantity.Screen(text); err != nil {
				ps = append(ps, problem{path, err})
			}
		}
	})
	return ps
}

var (
	quantityType    = reflect.TypeFor[resource.Quantity]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// objectType returns the Go type the decoder decodes js into: the type
// registered in the scheme for js's apiVersion and kind, found as the
// decoder finds it; nil when there is none (the decoder then decodes no
// field).
func objectType(js []byte) reflect.Type {
	gvk, err := kjson.DefaultMetaFactory.Interpret(js)
	if err != nil || gvk.Kind == "" || gvk.Version == "" {
		return nil
	}
	obj, err := scheme.New(*gvk)
	if err != nil {
		return nil
	}
	return reflect.TypeOf(obj)
}

// quantityFields calls f with the path (in [Error.Field]'s style:
// "spec.containers[0].resources.requests[cpu]") and the token (a string,
// json.Number, bool, nil, or the json.Delim that opens an object or
// array) of every JSON value in js that decoding into a value of type t
// hands to resource.Quantity, in document order, repeated keys included (the
// decoder parses each). It follows the decoder's rules: keys match JSON
// tag names exactly (k8s.io/apimachinery decodes case-sensitively),
// embedded structs without a tag name are inlined, and other types with
// their own JSON decoding (Time, IntOrString, RawExtension: a List's
// items, decoded one by one later) are not looked into. Malformed JSON
// ends the walk. Cost: O(len(js)) tokens, allocating per token; for
// error paths and documents maySlowQuantity flags.
func quantityFields(js []byte, t reflect.Type, f func(path string, v json.Token)) {
	walkFields(js, t, func(path string, v json.Token, vt reflect.Type) {
		if vt == quantityType {
			f(path, v)
		}
	})
}

// walkFields calls f with the path (in [Error.Field]'s style), the token
// (as quantityFields gives it) and the Go type the decoder decodes it
// into (pointers removed; nil when not known: under a type with its own
// JSON decoding, or a key no field has) of every JSON value in js decoded
// as a t, in document order: the walk quantityFields and mistypedField
// share. Values under a type with its own JSON decoding are not looked
// into: f is called for their parts with the value's path and a nil
// type, which both callers skip. Malformed JSON ends the walk.
// O(len(js)) tokens, allocating per token.
func walkFields(js []byte, t reflect.Type, f func(path string, v json.Token, t reflect.Type)) {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber()
	w := fieldWalk{dec: dec, f: f}
	tok, err := dec.Token()
	if err == nil {
		_ = w.value(tok, t, "")
	}
}

type fieldWalk struct {
	dec *json.Decoder
	f   func(path string, v json.Token, t reflect.Type)
}

// quantityText returns the text resource.Quantity parses for a JSON
// string or number token.
func quantityText(v json.Token) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return string(v), true
	}
	return "", false
}

// value walks the JSON value that starts with tok, decoded as a t (nil:
// not looked into) found at path.
func (w *fieldWalk) value(tok json.Token, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	w.f(path, tok, t)
	if t != nil && reflect.PointerTo(t).Implements(unmarshalerType) {
		t = nil
	}
	switch tok {
	case json.Delim('{'):
		for w.dec.More() {
			k, err := w.dec.Token()
			if err != nil {
				return err
			}
			key, _ := k.(string)
			var et reflect.Type
			at := path
			switch {
			case t == nil:
			case t.Kind() == reflect.Struct:
				et = fieldType(t, key)
				if at != "" {
					at += "."
				}
				at += key
			case t.Kind() == reflect.Map:
				et = t.Elem()
				at += "[" + key + "]"
			}
			if err := w.next(et, at); err != nil {
				return err
			}
		}
		_, err := w.dec.Token() // '}'
		return err
	case json.Delim('['):
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			if err := w.next(et, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
		_, err := w.dec.Token() // ']'
		return err
	}
	return nil
}

// mistypedField returns the path (in [Error.Field]'s style) and the
// token of the first value in js that decoding into a t cannot take
// because of its JSON type (a string for an integer field, a number out
// of the field's range, an object for a list...), and the Go kind the
// field wanted; ok false when there is none. Values of types with their
// own JSON decoding (Quantity, IntOrString, Time) are left to their
// decoders' errors. O(len(js)) tokens.
func mistypedField(js []byte, t reflect.Type) (path string, v json.Token, want reflect.Kind, ok bool) {
	walkFields(js, t, func(p string, tok json.Token, vt reflect.Type) {
		if ok || vt == nil || tok == nil || reflect.PointerTo(vt).Implements(unmarshalerType) {
			return
		}
		if !fitsKind(tok, vt) {
			path, v, want, ok = p, tok, vt.Kind(), true
		}
	})
	return path, v, want, ok
}

// fitsKind reports whether encoding/json's rules let a JSON value
// starting with token tok (not null) decode into a value of type t (not
// a pointer, without its own decoding).
func fitsKind(tok json.Token, t reflect.Type) bool {
	k := t.Kind()
	if k == reflect.Interface {
		return true
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			return k == reflect.Struct || k == reflect.Map
		}
		return k == reflect.Slice || k == reflect.Array
	case string:
		return k == reflect.String || k == reflect.Slice && t.Elem().Kind() == reflect.Uint8
	case bool:
		return k == reflect.Bool
	case json.Number:
		switch {
		case intKind(k):
			n, err := strconv.ParseInt(string(v), 10, 64)
			return err == nil && !reflect.Zero(t).OverflowInt(n)
		case uintKind(k):
			n, err := strconv.ParseUint(string(v), 10, 64)
			return err == nil && !reflect.Zero(t).OverflowUint(n)
		case k == reflect.Float32 || k == reflect.Float64:
			f, err := strconv.ParseFloat(string(v), 64)
			return err == nil && !reflect.Zero(t).OverflowFloat(f)
		}
		return false
	}
	return true
}

// intKind and uintKind report whether k is a signed or an unsigned
// integer kind (reflect numbers them contiguously).
func intKind(k reflect.Kind) bool  { return reflect.Int <= k && k <= reflect.Int64 }
func uintKind(k reflect.Kind) bool { return reflect.Uint <= k && k <= reflect.Uintptr }

func (w *fieldWalk) next(t reflect.Type, path string) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	return w.value(tok, t, path)
}

// fieldType returns the type of struct t's field whose JSON name is key,
// looking into embedded structs without a tag name; nil when there is
// none.
func fieldType(t reflect.Type, key string) reflect.Type {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if ft := fieldType(et, key); ft != nil {
					return ft
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if name == key {
			return sf.Type
		}
	}
	return nil
}
