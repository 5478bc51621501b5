package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestProfiles: -cpuprofile and -memprofile write pprof files (gzip), the
// report is unchanged, and a file that cannot be created is a usage error
// naming the flag and the path, found before the run as for -svg and
// -placements (it exited 1, -memprofile's after the whole run).
func TestProfiles(t *testing.T) {
	tmp := t.TempDir()
	cpu, mem := filepath.Join(tmp, "cpu.prof"), filepath.Join(tmp, "mem.prof")
	plain := runMain(t, "-scale", "0.05", "-policy", "default", "-timing=false")
	require.Equal(t, exitOK, plain.code, plain.stderr)
	got := runMain(t, "-scale", "0.05", "-policy", "default", "-timing=false", "-cpuprofile", cpu, "-memprofile", mem)
	require.Equal(t, exitOK, got.code, got.stderr)
	require.Equal(t, plain.stdout, got.stdout)
	for _, p := range []string{cpu, mem} {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Greater(t, len(b), 2)
		require.Equal(t, []byte{0x1f, 0x8b}, b[:2], "%s: a gzip-compressed pprof profile", p)
	}
	bad := filepath.Join(tmp, "no-such-folder", "x.prof")
	for _, flag := range []string{"-cpuprofile", "-memprofile"} {
		r := runMain(t, "-scale", "0.05", "-policy", "default", flag, bad)
		require.Equal(t, exitUsage, r.code, r.stderr)
		require.Equal(t, "simulate: "+flag+" "+bad+": folder "+filepath.Dir(bad)+" does not exist (see -h)\n", r.stderr)
		require.Empty(t, r.stdout, "no run")
	}
}
