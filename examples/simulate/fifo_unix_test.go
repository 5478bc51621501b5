//go:build unix

package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlacementsToNamedPipe: a named pipe is not probed before the run
// (opening and closing it ended the reader's stream, and the placements
// were lost, or the final open waited for a reader forever), and the run
// waits for a reader that comes late (see readLate). So does -svg.
func TestPlacementsToNamedPipe(t *testing.T) {
	tmp := t.TempDir()
	nodes := writeFile(t, tmp, "nodes.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16384,2,T4\n")
	pods := writeFile(t, tmp, "pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np1,1000,0,1,500\np2,1000,0,0,0\n")
	for _, tc := range []struct{ flag, name, want string }{
		{"-placements", "p.fifo", "p2"},
		{"-svg", "p.svg", "</svg>"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), tc.name)
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("no named pipes: %v", err)
			}
			r, out := readLate(t, fifo, "-nodes", nodes, "-pods", pods, "-policy", "default", tc.flag, fifo)
			require.Equal(t, exitOK, r.code, r.stderr)
			assert.Contains(t, string(out), tc.want)
		})
	}
}

// readLate runs simulate with args, which write to the named pipe fifo,
// and reads the pipe with a reader that opens it only once the run has
// returned or 200 ms have passed. Opened read-write (os.Create), the
// pipe took what the run wrote and dropped it at close when nobody had
// it open for reading, and a reader opening it afterwards waited
// forever; opened write-only, the run waits for the reader. A reader
// still waiting after 20 s fails the test (and is released).
func readLate(t *testing.T, fifo string, args ...string) (result, []byte) {
	t.Helper()
	done := make(chan result, 1)
	go func() { done <- runMain(t, args...) }()
	var r result
	returned := false
	select {
	case r = <-done:
		returned = true // without a reader: what it wrote went nowhere
	case <-time.After(200 * time.Millisecond): // waiting for a reader
	}
	got := make(chan []byte, 1)
	go func() {
		b, err := os.ReadFile(fifo) // blocks until a writer opens it, reads to its close
		assert.NoError(t, err)
		got <- b
	}()
	var out []byte
	select {
	case out = <-got:
	case <-time.After(20 * time.Second):
		// The reader waits for a writer that came and went: open and
		// close one to end its wait, and fail.
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = w.Close()
		}
		<-got
		t.Fatal("the reader got nothing: the run wrote into the pipe before it had a reader")
	}
	if !returned {
		r = <-done
	}
	return r, out
}
