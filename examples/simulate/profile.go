package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profileFlags adds -cpuprofile and -memprofile: Go pprof profiles of the
// whole run (input, replays, report), for `go tool pprof`.
func profileFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the run to `FILE` (go tool pprof)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile at the end of the run to `FILE` (go tool pprof; in-use and allocated bytes)")
}

// startProfiles starts the CPU profile the flags ask for and returns the
// function that stops it and writes the heap profile. Errors name the
// flag and the file; parse has already refused a path that cannot be
// written (outPathError, exit status 2), so one here is the run's
// failure.
func startProfiles(o *options) (stop func() error, err error) {
	var cpu *os.File
	if o.cpuProfile != "" {
		if cpu, err = createOut(o.cpuProfile); err != nil {
			return nil, fmt.Errorf("-cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			_ = cpu.Close()
			return nil, fmt.Errorf("-cpuprofile %s: %w", o.cpuProfile, err)
		}
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			if err := cpu.Close(); err != nil {
				errs = append(errs, fmt.Errorf("-cpuprofile: %w", err))
			}
		}
		if o.memProfile != "" {
			if err := writeHeapProfile(o.memProfile); err != nil {
				errs = append(errs, fmt.Errorf("-memprofile: %w", err))
			}
		}
		if len(errs) > 0 {
			return errs[0]
		}
		return nil
	}, nil
}

func writeHeapProfile(path string) error {
	f, err := createOut(path)
	if err != nil {
		return err
	}
	runtime.GC() // up-to-date in-use figures
	if err := pprof.WriteHeapProfile(f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
