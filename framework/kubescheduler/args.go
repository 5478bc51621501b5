package kubescheduler

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/schedkit/schedkit/score"
)

// ErrInvalidArgs: pluginConfig args that cannot be used; the message names
// the plugin and the field (`SchedkitScore args: resources[1].weight: ...`).
var ErrInvalidArgs = errors.New("kubescheduler: invalid plugin args")

// DecodeArgs fills out from a factory's args, strictly as upstream decodes
// its own: an unknown field, one in the wrong case or given twice, a wrong
// type or trailing data is an error wrapping [ErrInvalidArgs] naming plugin
// and field, and out is unchanged. obj: nil, a *runtime.Unknown with JSON or
// YAML (absent fields keep out's values: set defaults first), or a *T.
func DecodeArgs[T any](plugin string, obj runtime.Object, out *T) error {
	switch a := obj.(type) {
	case nil:
		return nil
	case *runtime.Unknown:
		var raw []byte
		if a != nil {
			raw = bytes.TrimSpace(a.Raw)
		}
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
		var msgs []string
		for _, e := range strict {
			msgs = append(msgs, jsonErr(e))
		}
		if msgs != nil {
			return fmt.Errorf("%w: %s args: %s", ErrInvalidArgs, plugin, strings.Join(msgs, "; "))
		}
		*out = tmp
		return nil
	default:
		v, ok := any(obj).(*T)
		if ok && v != nil {
			*out = *v
		} else if !ok {
			return fmt.Errorf("%w: %s args: want %T, got %T", ErrInvalidArgs, plugin, out, obj)
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

// argsError wraps a core validation error (naming the field) for plugin.
func argsError(plugin string, err error) error {
	return fmt.Errorf("%w: %s args: %w", ErrInvalidArgs, plugin, err)
}

// ScoreArgs are [NewSchedkitScore]'s and [SchedkitScoreFactory]'s args: a
// [score.Config] (Scorer is one of [score.ScorerNames]).
type ScoreArgs struct {
	metav1.TypeMeta `json:",inline"`
	Scorer          string                  `json:"scorer,omitempty"`
	Resources       []ResourceSpec          `json:"resources,omitempty"`
	Shape           []UtilizationShapePoint `json:"shape,omitempty"`
	Spread          bool                    `json:"spread,omitempty"`
}

// ResourceSpec and UtilizationShapePoint are score's, for [ScoreArgs].
type (
	ResourceSpec          = score.ResourceSpec
	UtilizationShapePoint = score.UtilizationShapePoint
)

// DeepCopyObject implements runtime.Object, so Go callers can pass args.
func (a *ScoreArgs) DeepCopyObject() runtime.Object {
	c := *a
	c.Resources, c.Shape = slices.Clone(a.Resources), slices.Clone(a.Shape)
	return &c
}

// ScorerFor builds the scorer args describe; errors wrap [ErrInvalidArgs].
func (a *ScoreArgs) ScorerFor(plugin string) (score.Scorer, error) {
	s, err := score.Config{Scorer: a.Scorer, Resources: a.Resources, Shape: a.Shape, Spread: a.Spread}.Build()
	if err != nil {
		return nil, argsError(plugin, err)
	}
	return s, nil
}

// FitArgs are [NewSchedkitFit]'s args (NodeResourcesFitArgs' filter fields).
type FitArgs struct {
	metav1.TypeMeta       `json:",inline"`
	IgnoredResources      []string `json:"ignoredResources,omitempty"`
	IgnoredResourceGroups []string `json:"ignoredResourceGroups,omitempty"`
}

// DeepCopyObject implements runtime.Object.
func (a *FitArgs) DeepCopyObject() runtime.Object {
	c := *a
	c.IgnoredResources, c.IgnoredResourceGroups = slices.Clone(a.IgnoredResources), slices.Clone(a.IgnoredResourceGroups)
	return &c
}
