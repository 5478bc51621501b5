package main

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress shows a bar on stderr while the runs go, but only when stderr
// is a terminal and the runs have taken longer than a second; otherwise it
// is silent. done and total count events (arrivals and departures) over
// all runs.
type progress struct {
	done, total atomic.Int64
	stop        chan struct{}
	wg          sync.WaitGroup
}

// startProgress starts the bar's goroutine when w is a terminal; total is
// the expected number of events.
func startProgress(w io.Writer, total int64) *progress {
	p := &progress{stop: make(chan struct{})}
	p.total.Store(total)
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return p
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		start := time.Now()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		var bar *progressbar.ProgressBar
		for {
			select {
			case <-p.stop:
				if bar != nil {
					_ = bar.Finish()
				}
				return
			case <-tick.C:
			}
			if bar == nil {
				if time.Since(start) < time.Second {
					continue
				}
				bar = progressbar.NewOptions64(max(p.total.Load(), 1),
					progressbar.OptionSetWriter(w),
					progressbar.OptionSetDescription("simulating"),
					progressbar.OptionShowCount(),
					progressbar.OptionSetItsString("events"),
					progressbar.OptionShowIts(),
					progressbar.OptionSetPredictTime(true),
					progressbar.OptionClearOnFinish(),
					progressbar.OptionThrottle(100*time.Millisecond))
			}
			bar.ChangeMax64(max(p.total.Load(), 1))
			_ = bar.Set64(p.done.Load())
		}
	}()
	return p
}

// close stops the bar (clearing it) and waits for its goroutine.
func (p *progress) close() {
	close(p.stop)
	p.wg.Wait()
}
