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

// ErrInvalidArgs: plugin args from a KubeSchedulerConfiguration pluginConfig
// that cannot be used (malformed JSON/YAML, an unknown or misspelled field, a
// value out of range). The message names the plugin and the field, e.g.
// `SchedkitScore args: resources[1].weight: 0 is outside [1, 100]`.
var ErrInvalidArgs = errors.New("kubescheduler: invalid plugin args")

// DecodeArgs fills out from the args a plugin factory receives, strictly:
// an unknown or misspelled field, a field of the wrong type or malformed
// JSON/YAML is an error wrapping [ErrInvalidArgs] that names plugin and the
// field (`MyPlugin args: lablKey: unknown field`), so the scheduler refuses
// to start instead of silently ignoring a typo. Use it in your own plugin's
// factory for your own args type:
//
//	type MyArgs struct {
//		LabelKey string `json:"labelKey"`
//	}
//
//	func NewMyPlugin(_ context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
//		args := MyArgs{LabelKey: "example.com/preferred"} // defaults, kept for absent fields
//		if err := kubescheduler.DecodeArgs("MyPlugin", obj, &args); err != nil {
//			return nil, err
//		}
//		...
//	}
//
// obj may be nil (no pluginConfig entry: out is left as it is), a
// *runtime.Unknown holding the pluginConfig args as JSON or YAML (what
// kube-scheduler hands an out-of-tree plugin), or a *T when T itself
// implements runtime.Object (a Go caller passing typed args, copied into
// out). Fields present in the args overwrite out's; absent ones keep their
// value. Decoding is strict, as upstream's for its own args: an unknown
// field, a field name in the wrong case (fields match their json tags
// exactly), a field given twice, a value of the wrong type or anything
// after the args object is an error wrapping [ErrInvalidArgs] that names
// the plugin and the field, and out is left as it was. Validation of values is
// the caller's. Cost: one JSON decode of the args; called once per plugin
// and profile at scheduler start.
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
			return fmt.Errorf("%w: %s args: %s", ErrInvalidArgs, plugin, jsonErr(err))
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
		if v, ok := any(obj).(*T); ok {
			if v == nil {
				return nil
			}
			*out = *v
			return nil
		}
		return fmt.Errorf("%w: %s args: want %T, got %T", ErrInvalidArgs, plugin, out, obj)
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
			return fmt.Sprintf("%s: unknown field (names are case-sensitive)", strings.Trim(f, `"`))
		}
	}
	if f, ok := strings.CutPrefix(msg, "duplicate field "); ok {
		return fmt.Sprintf("%s: given twice", strings.Trim(f, `"`))
	}
	return msg
}

// argsError wraps a validation failure of the core (whose message already
// names the field) as ErrInvalidArgs for plugin.
func argsError(plugin string, err error) error {
	return fmt.Errorf("%w: %s args: %w", ErrInvalidArgs, plugin, err)
}
