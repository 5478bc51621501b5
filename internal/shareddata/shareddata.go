// Package shareddata locates the project's real cluster data for tests and
// benchmarks: ../shared/data/<sub> beside the checkout, the checkout being
// the directory that holds go.work. A test on a clone without that folder
// is skipped with a message saying what is missing, so `go test` still
// passes on a fresh machine.
//
// Layer: the bottom, and for tests only: shareddata imports no schedkit
// package, and only _test.go files import it (TestLayering checks this).
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of ../shared/data/<sub>, or skips tb when
// there is no go.work above the working directory or the folder is absent.
func Dir(tb testing.TB, sub string) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatalf("shareddata: %v", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skipf("real data %s: no go.work above the test directory, so no ../shared/data", sub)
		}
		dir = parent
	}
	p := filepath.Join(dir, "..", "shared", "data", sub)
	if _, err := os.Stat(p); err != nil {
		tb.Skipf("real data %s absent (%v); it lives beside the checkout in ../shared/data", sub, err)
	}
	return p
}
