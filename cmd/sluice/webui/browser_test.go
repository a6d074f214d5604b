package webui_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var screenshot = flag.String("screenshot", "", "write a screenshot of the page to this file (docs/ui.png: go test ./cmd/sluice/webui -run Browser -screenshot $PWD/docs/ui.png)")

// chromium returns the headless browser to drive: Debian's chromium (.ci/run installs it),
// or another Chrome on the PATH.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("no chromium on the PATH: the web UI's browser test needs Debian's chromium package (apt-get install chromium; .ci/run installs it)")
	return ""
}

// The page in a real browser: it shows every node of the graph, a node's counter rises while
// records flow without the page being loaded again, and the error sample shows the password
// masked.
func TestBrowser(t *testing.T) {
	browser := chromium(t)
	if testing.Short() {
		t.Skip("starts a browser and waits for the page to update (about 6 s): not under -short")
	}
	r := startRun(t)

	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]), chromedp.ExecPath(browser),
		chromedp.NoSandbox, chromedp.WindowSize(1280, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 30*time.Second)
	defer cancelTimeout()

	if err := chromedp.Do(ctx, chromedp.Navigate(r.url+"/"), chromedp.WaitVisible(`#graph [data-node="dead_letters"]`)); err != nil {
		t.Fatalf("loading the page: %v", err)
	}
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(`#graph [data-node]`))
	if err != nil {
		t.Fatalf("reading the graph: %v", err)
	}
	var shown []string
	for _, n := range nodes {
		shown = append(shown, n.AttributeValue("data-node"))
	}
	var want []string
	for _, n := range r.plan.Nodes {
		want = append(want, n.Name)
	}
	if !slices.Equal(shown, want) {
		t.Errorf("the graph shows %q, want every node of the plan %q", shown, want)
	}

	// The generator's rows out, as the page shows them, rise while the page stays loaded.
	out := func() int {
		text, err := chromedp.Run(ctx, chromedp.TextContent(`#graph [data-node="events"] .out .count`))
		if err != nil {
			t.Fatalf("reading events' rows out: %v", err)
		}
		v, err := strconv.Atoi(strings.ReplaceAll(text, ",", ""))
		if err != nil {
			return -1 // not read yet: a dash
		}
		return v
	}
	first := out()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if v := out(); first >= 0 && v > first {
			break
		} else if first < 0 {
			first = v
		}
		if time.Now().After(deadline) {
			t.Fatalf("events' rows out stayed at %d for 10 s", first)
		}
	}

	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.TextContent(sel))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return s
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(`#errors li`)); err != nil {
		t.Fatalf("waiting for an error sample: %v", err)
	}
	errorsText, rate, commits := text(`#errors`), text(`#graph [data-node="events"] .out .rate`), text(`#commits tbody`)
	if !strings.Contains(errorsText, "<secret:api_key>") || strings.Contains(errorsText, apiKey) {
		t.Errorf("the error samples do not mask the password:\n%s", errorsText)
	}
	if !strings.HasSuffix(rate, "/s") {
		t.Errorf("events' rate %q: want rows per second", rate)
	}
	for _, sink := range []string{"archive", "quotas", "dead_letters"} {
		if !strings.Contains(commits, sink) {
			t.Errorf("the last commits lack sink %s:\n%s", sink, commits)
		}
	}

	if *screenshot != "" {
		time.Sleep(1500 * time.Millisecond) // the rates of a second answer
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*screenshot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
