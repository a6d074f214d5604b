package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/runner"
)

// On a terminal the progress is a block redrawn in place: a log line erases it, is written,
// and the block comes back under it; the block says the percent of a bounded source's backlog,
// its rate and the time left, and an unbounded source's lag.
func TestLiveProgress(t *testing.T) {
	var out bytes.Buffer
	term := &liveTerm{w: &out}
	p := runner.Progress{Elapsed: 3 * time.Second, Epochs: 2, Sources: []runner.SourceProgress{
		{Name: "orders", Read: 250, Rate: 100, Lag: -1, Backlog: 1000, Done: 250},
		{Name: "clicks", Read: 40, Rate: 20, Lag: 7, LagSeconds: 1.5},
	}}
	term.show(p)
	block := "  orders:  25.0% of 1000 records, 100/s, 8s left\n  clicks: 40 records, 20/s, lag 7 records (1.5 s)\n  2 epochs committed, running for 3s\n"
	if out.String() != block {
		t.Fatalf("live block:\n%q\nwant\n%q", out.String(), block)
	}
	out.Reset()
	if _, err := term.Write([]byte("level=INFO msg=hello\n")); err != nil {
		t.Fatal(err)
	}
	if want := "\x1b[3A\x1b[J" + "level=INFO msg=hello\n" + block; out.String() != want {
		t.Fatalf("a log line under a live block wrote\n%q\nwant\n%q", out.String(), want)
	}
	out.Reset()
	term.done()
	if out.String() != "\x1b[3A\x1b[J" {
		t.Fatalf("done wrote %q, want the block erased", out.String())
	}
	out.Reset()
	_, _ = term.Write([]byte("after\n"))
	if !strings.HasPrefix(out.String(), "after\n") || strings.Contains(out.String(), "orders") {
		t.Fatalf("after done, a log line wrote %q", out.String())
	}
}
