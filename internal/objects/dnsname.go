package objects

import (
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DNSSubdomain is apivalidation.NameIsDNSSubdomain (the API server's
// rule for pod and node names: a lowercase RFC 1123 subdomain of at most
// 253 bytes) with a fast path: a valid name is accepted by a byte loop,
// and only an invalid one is passed to apimachinery, for its messages.
// The same results as apimachinery's regular expression
// (FuzzDNSNames). O(len(name)); allocates nothing for a valid name.
func DNSSubdomain(name string, prefix bool) []string {
	if !prefix && IsDNSSubdomain(name) {
		return nil
	}
	return apivalidation.NameIsDNSSubdomain(name, prefix)
}

// namespaceName is apivalidation.ValidateNamespaceName (a lowercase RFC
// 1123 label of at most 63 bytes) with the fast path of [DNSSubdomain].
func namespaceName(name string) []string {
	if IsDNSLabel(name) {
		return nil
	}
	return apivalidation.ValidateNamespaceName(name, false)
}

// IsDNSLabel reports whether s matches validation.IsDNS1123Label's
// rule: 1 to 63 bytes of [a-z0-9-], starting and ending with [a-z0-9].
// O(len(s)); allocates nothing.
func IsDNSLabel(s string) bool {
	return len(s) <= validation.DNS1123LabelMaxLength && isLabel(s)
}

// IsDNSSubdomain reports whether s matches
// validation.IsDNS1123Subdomain's rule: at most 253 bytes, labels as in
// [IsDNSLabel] but without their length limit, joined by '.'.
// O(len(s)); allocates nothing.
func IsDNSSubdomain(s string) bool {
	if len(s) > validation.DNS1123SubdomainMaxLength {
		return false
	}
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if !isLabel(s[start:i]) {
				return false
			}
			start = i + 1
		}
	}
	return true
}

// isLabel reports whether s is [a-z0-9]([-a-z0-9]*[a-z0-9])?, of any
// length.
func isLabel(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}
