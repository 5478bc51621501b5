//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlacementsToNamedPipe: a named pipe is not probed before the run
// (opening and closing it ended the reader's stream, and the placements
// were lost, or the final open waited for a reader forever).
func TestPlacementsToNamedPipe(t *testing.T) {
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "p.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes: %v", err)
	}
	nodes := writeFile(t, tmp, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16384,2,T4\n")
	pods := writeFile(t, tmp, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,0,1,500\np2,1000,0,0,0\n")
	got := make(chan []byte, 1)
	go func() {
		b, err := os.ReadFile(fifo) // blocks until the run opens it, reads to its close
		assert.NoError(t, err)
		got <- b
	}()
	r := runMain(t, "-nodes", nodes, "-pods", pods, "-policy", "default", "-placements", fifo)
	require.Equal(t, exitOK, r.code, r.stderr)
	csv := string(<-got)
	assert.Contains(t, csv, "p1")
	assert.Contains(t, csv, "p2")
}
