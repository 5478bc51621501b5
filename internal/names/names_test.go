package names

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/validate/content"
	"k8s.io/apimachinery/pkg/util/validation"
)

// FuzzNames: each predicate gives apimachinery's verdict — IsDNSLabel
// IsDNS1123Label's, IsDNSSubdomain IsDNS1123Subdomain's, IsLabelKey
// IsQualifiedName's and labels' content.IsLabelKey's (the check
// labels.NewRequirement runs), IsLabelValue IsValidLabelValue's.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"", "a", "0", "-", ".", "-a", "a-", "a.b", "a..b", ".a", "a.", "A", "a_b", "a/b", "/b", "a/", "a/b/c",
		"example.com/My_Name.1", "kubernetes.io/hostname", "topology.kubernetes.io/zone", "x/-a", "Ex.com/a", "Bad_NS", "a b",
		"é", "a\n", "a\x00", "9-9", "a.b-c.d0", strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253),
		strings.Repeat("a", 254), strings.Repeat("a.", 126) + "a", "p.example/" + strings.Repeat("b", 63), "p.example/" + strings.Repeat("b", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, len(validation.IsDNS1123Label(s)) == 0, IsDNSLabel(s), "IsDNSLabel(%q)", s)
		require.Equal(t, len(validation.IsDNS1123Subdomain(s)) == 0, IsDNSSubdomain(s), "IsDNSSubdomain(%q)", s)
		require.Equal(t, len(validation.IsQualifiedName(s)) == 0, IsLabelKey(s), "IsLabelKey(%q)", s)
		require.Equal(t, len(content.IsLabelKey(s)) == 0, IsLabelKey(s), "IsLabelKey(%q) vs content.IsLabelKey", s)
		require.Equal(t, len(validation.IsValidLabelValue(s)) == 0, IsLabelValue(s), "IsLabelValue(%q)", s)
	})
}
