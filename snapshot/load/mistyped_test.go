package load

import (
	"encoding/json"
	"errors"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
)

// TestMistypedFieldAgreesWithDecoder: every leaf of a Pod and a
// Deployment replaced by a value of each JSON type; mistypedField finds
// a field exactly when encoding/json (whose type rules apimachinery's
// decoder keeps) refuses the document with a type error, and it names
// the decoder's field (which carries no list indexes or map keys).
func TestMistypedFieldAgreesWithDecoder(t *testing.T) {
	docs := []struct {
		js  string
		obj any
	}{
		{`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"b"}},"spec":{"priority":5,"hostNetwork":true,` +
			`"nodeSelector":{"k":"v"},"containers":[{"name":"c","ports":[{"containerPort":80}],"stdin":false,"resources":{"requests":{"cpu":"1"}}}],` +
			`"tolerations":[{"key":"k","tolerationSeconds":30}],"terminationGracePeriodSeconds":10}}`, &v1.Pod{}},
		{`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":3,"paused":false,` +
			`"selector":{"matchLabels":{"app":"x"}},"template":{"spec":{"containers":[{"name":"c"}]}}}}`, &appsv1.Deployment{}},
	}
	subs := []string{`"x"`, `7`, `-7`, `1.5`, `99999999999`, `true`, `{}`, `[]`, `{"name":"q"}`, `["a"]`}
	leaf := regexp.MustCompile(`:("[^"]*"|-?[0-9.]+|true|false)`)
	index := regexp.MustCompile(`\[[^\]]*\]`)
	checked, found := 0, 0
	for _, d := range docs {
		typ := reflect.TypeOf(d.obj)
		require.False(t, func() bool { _, _, _, ok := mistypedField([]byte(d.js), typ); return ok }(), d.js)
		for _, m := range leaf.FindAllStringSubmatchIndex(d.js, -1) {
			for _, sub := range subs {
				js := d.js[:m[2]] + sub + d.js[m[3]:]
				path, _, _, ok := mistypedField([]byte(js), typ)
				err := json.Unmarshal([]byte(js), reflect.New(typ.Elem()).Interface())
				var te *json.UnmarshalTypeError
				isType := errors.As(err, &te)
				checked++
				if !isType {
					require.False(t, ok, "%s: found %s, decoder: %v", js, path, err)
					continue
				}
				found++
				require.True(t, ok, "%s: decoder: %v", js, err)
				// The decoder's field names embedded structs by their Go
				// names (TypeMeta.apiVersion); those are not in the JSON.
				var want []string
				for _, seg := range strings.Split(te.Field, ".") {
					if seg != "" && (seg[0] < 'A' || seg[0] > 'Z') {
						want = append(want, seg)
					}
				}
				require.Equal(t, strings.Join(want, "."), index.ReplaceAllString(path, ""), js)
			}
		}
	}
	require.Greater(t, found, 50, "of %d documents", checked)
}
