package kubescheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// ErrInvalidArgs: pluginConfig args that cannot be used (malformed, an
// unknown or misspelled field, a value out of range); the message names the
// plugin and the field (`SchedkitScore args: resources[1].weight: ...`).
var ErrInvalidArgs = errors.New("kubescheduler: invalid plugin args")

// DecodeArgs fills out from the args a plugin factory receives, strictly as
// upstream decodes its own: an unknown field, a field name in the wrong
// case, a field given twice, a wrong type or data after the args object is
// an error wrapping [ErrInvalidArgs] naming plugin and field, and out is
// left as it was. obj may be nil or a nil *runtime.Unknown (no args: out
// unchanged), a *runtime.Unknown with JSON or YAML (what kube-scheduler
// hands an out-of-tree plugin; absent fields keep out's values, so set
// defaults first), or a *T (typed args from Go, copied). Validating values
// is the caller's. One JSON decode, at scheduler start.
func DecodeArgs[T any](plugin string, obj runtime.Object, out *T) error {
	switch a := obj.(type) {
	case nil:
		return nil
	case *runtime.Unknown:
		if a == nil {
			return nil
		}
		raw := bytes.TrimSpace(a.Raw)
		if len(raw) == 0 || string(raw) == "null" {
			return nil
		}
		if raw[0] != '{' { // YAML (a Go caller's); kube-scheduler hands over JSON
			j, err := yaml.YAMLToJSON(raw)
			if err != nil {
				return fmt.Errorf("%w: %s args: %v", ErrInvalidArgs, plugin, err)
			}
			raw = j
		}
		tmp := *out // out changes only when the whole decode succeeds
		strict, err := sigsjson.UnmarshalStrict(raw, &tmp)
		if err != nil {
			strict = []error{err}
		}
		if len(strict) > 0 {
			msgs := make([]string, len(strict))
			for i, e := range strict {
				msgs[i] = jsonErr(e)
			}
			return fmt.Errorf("%w: %s args: %s", ErrInvalidArgs, plugin, strings.Join(msgs, "; "))
		}
		*out = tmp
		return nil
	default:
		v, ok := any(obj).(*T)
		if !ok {
			return fmt.Errorf("%w: %s args: want %T, got %T", ErrInvalidArgs, plugin, out, obj)
		}
		if v != nil {
			*out = *v
		}
		return nil
	}
}

// jsonErr turns the decoders' messages into field-naming ones.
func jsonErr(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "(the args object)"
		}
		return fmt.Sprintf("%s: cannot use %s as %s", field, te.Value, te.Type)
	}
	msg := err.Error()
	for _, prefix := range []string{"json: unknown field ", "unknown field "} {
		if f, ok := strings.CutPrefix(msg, prefix); ok {
			return strings.Trim(f, `"`) + ": unknown field (names are case-sensitive)"
		}
	}
	if f, ok := strings.CutPrefix(msg, "duplicate field "); ok {
		return strings.Trim(f, `"`) + ": given twice"
	}
	return msg
}

// argsError wraps a validation failure of the core (naming the field) as
// ErrInvalidArgs for plugin.
func argsError(plugin string, err error) error {
	return fmt.Errorf("%w: %s args: %w", ErrInvalidArgs, plugin, err)
}
