// Package names holds allocation-free predicates for the Kubernetes name
// and label rules that apimachinery checks with regular expressions
// (k8s.io/apimachinery/pkg/util/validation): DNS-1123 labels and
// subdomains, qualified names (label keys) and label values. Each gives
// exactly apimachinery's verdict (FuzzNames); callers run apimachinery's
// own check, for its messages, only when a predicate says no.
//
// Layer: the bottom. names imports no schedkit package, so that the
// selector engine, objects and snapshot can all use it.
package names

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

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

// IsLabelKey reports whether validation.IsQualifiedName (and labels'
// content.IsLabelKey, the same rule) finds nothing in s: an optional
// DNS-1123 subdomain prefix and '/', then a name of 1 to 63 characters as
// in IsLabelValue. O(len(s)); allocates nothing.
func IsLabelKey(s string) bool {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		if i == 0 || !IsDNSSubdomain(s[:i]) {
			return false
		}
		s = s[i+1:]
	}
	return s != "" && IsLabelValue(s)
}

// IsLabelValue reports whether validation.IsValidLabelValue finds
// nothing in s: empty, or 1 to 63 of [-A-Za-z0-9_.], starting and ending
// alphanumeric. O(len(s)); allocates nothing.
func IsLabelValue(s string) bool {
	if s == "" {
		return true
	}
	if len(s) > 63 || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
