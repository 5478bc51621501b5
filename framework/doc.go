// Package framework is the custom-loop side of schedkit: upstream
// kube-scheduler's filter plugins with identical verdicts, the scheduling
// cycle (filter → score → select → reserve) and a small loop helper, so
// that a scheduler or a simulator fits in a page of code.
package framework
