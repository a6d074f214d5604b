package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/runner"
)

// liveTerm draws a run's progress on a terminal: a block of lines (one per source and one for
// the commits) at the bottom, redrawn in place, with the log lines written above it. Both the
// logger and the run's Live callback write through it, so that neither tears the other.
type liveTerm struct {
	mu    sync.Mutex
	w     io.Writer
	block string // the live block as last drawn
	lines int    // its lines on screen
}

// Write writes log output above the live block.
func (t *liveTerm) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.erase()
	n, err := t.w.Write(p)
	t.draw()
	return n, err
}

// show replaces the live block with p.
func (t *liveTerm) show(p runner.Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.erase()
	t.block = renderProgress(p)
	t.draw()
}

// done removes the live block: the run's summary follows.
func (t *liveTerm) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.erase()
	t.block = ""
}

func (t *liveTerm) erase() {
	if t.lines > 0 {
		fmt.Fprintf(t.w, "\x1b[%dA\x1b[J", t.lines) // up to the block's first line, clear to the end
		t.lines = 0
	}
}

func (t *liveTerm) draw() {
	if t.block != "" {
		io.WriteString(t.w, t.block)
		t.lines = strings.Count(t.block, "\n")
	}
}

// renderProgress is the live block: per source, for bounded work the percent of the backlog,
// the rate and the time left, else what was read, the rate and the lag; then the commits.
func renderProgress(p runner.Progress) string {
	var b strings.Builder
	for _, s := range p.Sources {
		fmt.Fprintf(&b, "  %s: ", s.Name)
		if pc := s.Percent(); pc >= 0 {
			fmt.Fprintf(&b, "%5.1f%% of %d records, %.0f/s", pc, s.Backlog, s.Rate)
			if eta := s.ETA(); eta >= 0 {
				fmt.Fprintf(&b, ", %v left", eta.Round(time.Second))
			}
		} else {
			fmt.Fprintf(&b, "%d records, %.0f/s", s.Read, s.Rate)
			if s.Lag >= 0 {
				fmt.Fprintf(&b, ", lag %d records (%.1f s)", s.Lag, s.LagSeconds)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "  %d epochs committed", p.Epochs)
	if !p.LastCommit.IsZero() {
		fmt.Fprintf(&b, ", the last %v ago", time.Since(p.LastCommit).Round(100*time.Millisecond))
	}
	b.WriteString(", running for " + p.Elapsed.Round(time.Second).String() + "\n")
	return b.String()
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
