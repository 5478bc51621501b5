package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/schedkit/schedkit/snapshot/load"
)

// loadObjectFiles loads paths. Without strict it still reports, as
// warnings (one line each, naming the file, document, object and field),
// the fields k8s.io/api does not know or that appear twice — a typo such
// as "resource:" for "resources:" would otherwise give a pod zero requests
// silently: it loads strictly first and, only if that fails, loads again
// leniently (so a clean input is read once). A path that is not a regular
// file or a directory (a pipe such as /dev/stdin cannot be read twice) is
// loaded once, leniently, warning of the keys given twice only (the
// load's Objects.Warnings). With expand, workloads are expanded into
// their pods (load.Options.ExpandWorkloads). With strict, objects of
// other kinds are errors too (load.Options.RejectOtherKinds).
func loadObjectFiles(paths []string, strict, expand bool) (load.Objects, []string, error) {
	objs, warnings, err := loadObjectFilesOnce(paths, strict, expand)
	// A Deployment left unscaled is said whatever the mode.
	for _, w := range objs.Warnings {
		if errors.Is(w, load.ErrNotExpanded) {
			warnings = append(warnings, "warning: "+w.Error())
		}
	}
	return objs, warnings, err
}

// loadObjectFilesOnce is loadObjectFiles without the warnings of
// Deployments left unscaled.
func loadObjectFilesOnce(paths []string, strict, expand bool) (load.Objects, []string, error) {
	if !strict && !rereadable(paths) {
		objs, err := load.Options{ExpandWorkloads: expand}.Files(paths...)
		var warnings []string
		for _, w := range objs.Warnings {
			if !errors.Is(w, load.ErrNotExpanded) {
				warnings = append(warnings, warning(w))
			}
		}
		return objs, warnings, err
	}
	// Under strict, an object of a kind the program does not read is an
	// error naming its file, line and name (RejectOtherKinds).
	objs, err := load.Options{Strict: true, ExpandWorkloads: expand, RejectOtherKinds: strict}.Files(paths...)
	if err == nil || strict {
		return objs, nil, err
	}
	var warnings []string
	for _, e := range joined(err) {
		if le := (*load.Error)(nil); errors.As(e, &le) && !errors.Is(le.Err, load.ErrUnknownField) {
			continue // the lenient load reports it too
		}
		warnings = append(warnings, warning(e))
	}
	// The strict load's errors above include the keys given twice,
	// which this load lists again in objs.Warnings.
	objs, err = load.Options{ExpandWorkloads: expand}.Files(paths...)
	if err != nil {
		return objs, nil, err
	}
	return objs, warnings, nil
}

// warning formats one ignored field on one line.
func warning(e error) string {
	return fmt.Sprintf("warning: %s (ignored; -strict rejects it)", strings.ReplaceAll(e.Error(), "\n", " "))
}

// loadInputFiles is loadObjectFiles plus the objects load skipped (a
// Node of another apiVersion, a Job): an object the program does
// not read changes its answer when it was meant to be read, so without
// strict they are one more warning line (under strict loadObjectFiles
// has already rejected each, naming it). expand is loadObjectFiles'.
func loadInputFiles(paths []string, strict, expand bool) (load.Objects, []string, error) {
	objs, warnings, err := loadObjectFiles(paths, strict, expand)
	if err != nil || len(objs.Skipped) == 0 {
		return objs, warnings, err
	}
	return objs, append(warnings, fmt.Sprintf("warning: %s:%s (ignored; -strict rejects them)", strings.Join(paths, ", "), skippedKinds(objs.Skipped, expand))), nil
}

// rereadable reports whether every path is a regular file or a directory.
func rereadable(paths []string) bool {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || !(fi.Mode().IsRegular() || fi.IsDir()) {
			return false
		}
	}
	return true
}

// joined lists the errors err joins (err itself when it joins none).
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
