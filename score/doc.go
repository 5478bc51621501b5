// Package score ranks nodes for a pod: the [Scorer] interface a user
// implements, weighted [Profile]s with upstream kube-scheduler's rules,
// explanations, and built-in scorers whose integer results equal
// kube-scheduler v1.37's.
package score
