package objects

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	"github.com/schedkit/schedkit/internal/names"
)

// DNSSubdomain is apivalidation.NameIsDNSSubdomain (the API server's
// rule for pod and node names: a lowercase RFC 1123 subdomain of at most
// 253 bytes) with a fast path: a valid name is accepted by a byte loop,
// and only an invalid one is passed to apimachinery, for its messages.
// The same results as apimachinery's regular expression
// (FuzzDNSNames). O(len(name)); allocates nothing for a valid name.
func DNSSubdomain(name string, prefix bool) []string {
	if !prefix && names.IsDNSSubdomain(name) {
		return nil
	}
	return apivalidation.NameIsDNSSubdomain(name, prefix)
}

// namespaceName is apivalidation.ValidateNamespaceName (a lowercase RFC
// 1123 label of at most 63 bytes) with the fast path of [DNSSubdomain].
func namespaceName(name string) []string {
	if names.IsDNSLabel(name) {
		return nil
	}
	return apivalidation.ValidateNamespaceName(name, false)
}
