package objects

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/schedkit/schedkit/internal/names"
)

// dnsNameSeeds are names at the rules' edges: dots, dashes, case, other
// bytes, and the length limits (63 for a label, 253 for a subdomain).
var dnsNameSeeds = []string{
	"", "a", "0", "-", ".", "a-b", "a.b", "a..b", ".a", "a.", "-a", "a-", "a.-b", "a-.b",
	"Bad_NS", "bad_ns", "Web", "web1", "1web", "a b", "é", "a\x00", "kube-system", "my-pod.v1",
	strings.Repeat("a", 63), strings.Repeat("a", 64), strings.Repeat("a", 253), strings.Repeat("a", 254),
	strings.Repeat("a.", 126) + "a", strings.Repeat("a.", 126) + "ab",
}

// FuzzDNSNames checks the fast paths against apimachinery's regular
// expressions: the same verdict and, for a bad name, the same messages.
func FuzzDNSNames(f *testing.F) {
	for _, s := range dnsNameSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := validation.IsDNS1123Subdomain(s)
		require.Equal(t, len(want) == 0, names.IsDNSSubdomain(s), "isDNS1123Subdomain(%q)", s)
		require.Equal(t, apivalidation.NameIsDNSSubdomain(s, false), DNSSubdomain(s, false), "DNSSubdomain(%q)", s)
		require.Equal(t, apivalidation.NameIsDNSSubdomain(s, true), DNSSubdomain(s, true), "DNSSubdomain(%q, prefix)", s)
		wantNS := apivalidation.ValidateNamespaceName(s, false)
		require.Equal(t, len(validation.IsDNS1123Label(s)) == 0, names.IsDNSLabel(s), "isDNS1123Label(%q)", s)
		require.Equal(t, wantNS, namespaceName(s), "namespaceName(%q)", s)
	})
}

// TestDNSNamesAllocFree pins the fast path: a valid pod key costs no
// allocation.
func TestDNSNamesAllocFree(t *testing.T) {
	name, ns := "web-7d4b9c-x2x9z.v1", "kube-system"
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		if NamespacedNames(name, ns, DNSSubdomain) != nil {
			t.Fatal("valid names refused")
		}
	}))
}

// BenchmarkPodKeyNames: the names check of a pod's key (metadata.name,
// metadata.namespace), with the fast path and with apimachinery's
// regular expressions alone.
func BenchmarkPodKeyNames(b *testing.B) {
	name, ns := "web-7d4b9c-x2x9z", "team-a"
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = NamespacedNames(name, ns, DNSSubdomain)
		}
	})
	b.Run("regexp", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = apivalidation.NameIsDNSSubdomain(name, false)
			_ = apivalidation.ValidateNamespaceName(ns, false)
		}
	})
}
