package webui_test

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/cmd/sluice/webui"
	_ "github.com/sluicehq/sluice/connectors/all"
	"github.com/sluicehq/sluice/runner"
	"github.com/sluicehq/sluice/templates"
	_ "github.com/sluicehq/sluice/transforms/all"
)

// apiKey is the password the test pipeline's error row holds: the page must never show it.
const apiKey = "k3y-0f-th3-t3st"

// liveRun is testdata/live.yaml running in-process with the page served beside it.
type liveRun struct {
	url  string
	plan *runner.Plan
}

// startRun runs testdata/live.yaml until the test ends, serving its page as sluice run
// --http-addr does.
func startRun(t *testing.T) *liveRun {
	t.Helper()
	p, err := runner.LoadWith("testdata/live.yaml", runner.LoadOptions{Params: []templates.Param{
		{Name: "out", Value: t.TempDir()}, {Name: "api_key", Value: apiKey}}})
	if err != nil {
		t.Fatal(err)
	}
	reg, health, recent := prometheus.NewRegistry(), runner.NewHealth(), runner.NewRecent()
	mux := http.NewServeMux()
	webui.New(webui.Config{Plan: p, Metrics: reg, Health: health, Recent: recent}).Register(mux)
	srv := httptest.NewServer(mux)
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		_, err := runner.Execute(context.Background(), p, runner.RunConfig{Stop: stop, Metrics: reg, Health: health, Recent: recent, Version: "test"})
		done <- err
	}()
	t.Cleanup(func() {
		close(stop)
		if err := <-done; err != nil {
			t.Errorf("the run: %v", err)
		}
		srv.Close()
	})
	return &liveRun{url: srv.URL, plan: p}
}

func (r *liveRun) state(t *testing.T) *webui.State {
	t.Helper()
	var st webui.State
	if err := json.Unmarshal([]byte(get(t, r.url+"/api/state")), &st); err != nil {
		t.Fatal(err)
	}
	return &st
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s %v", url, resp.StatusCode, body, err)
	}
	return string(body)
}

// waitFor asks for the state until ok holds, for at most 10 s.
func (r *liveRun) waitFor(t *testing.T, what string, ok func(*webui.State) bool) *webui.State {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := r.state(t)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			b, _ := json.MarshalIndent(st, "", " ")
			t.Fatalf("waited 10s for %s; the state:\n%s", what, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func node(st *webui.State, name string) webui.NodeState {
	for _, n := range st.Nodes {
		if n.Name == name {
			return n
		}
	}
	return webui.NodeState{}
}

// The state of a running pipeline: its graph as sluice graph draws it, counters that rise, each
// sink's commits with the spec's lineage, and the error row with its password masked.
func TestStateOfARun(t *testing.T) {
	r := startRun(t)
	committed := func(st *webui.State) bool {
		sinks := map[string]bool{}
		for _, c := range st.Commits {
			sinks[c.Sink] = true
		}
		return len(sinks) == 3 && len(st.Errors) > 0 && st.Ready == "ok"
	}
	st := r.waitFor(t, "a commit of every sink and an error sample", committed)

	var names, kinds []string
	for _, n := range st.Nodes {
		names = append(names, n.Name)
		kinds = append(kinds, n.Kind)
	}
	if got, want := strings.Join(names, " "), "events high_scores archive accounts per_call quotas dead_letters"; got != want {
		t.Errorf("nodes %q, want %q", got, want)
	}
	if got, want := strings.Join(kinds, " "), "source transform sink source transform sink sink"; got != want {
		t.Errorf("kinds %q, want %q", got, want)
	}
	if dot := r.plan.DOT(); !strings.Contains(dot, `n4 -> n6 [label="failed", style=dashed, color=red]`) {
		t.Fatalf("sluice graph draws no error edge from per_call to dead_letters:\n%s", dot)
	}
	if !containsEdge(st.Edges, runner.GraphEdge{From: 4, To: 6, Label: "failed", Errors: true}) {
		t.Errorf("edges %+v lack the error edge per_call.failed -> dead_letters that sluice graph draws", st.Edges)
	}
	// The run's own per-transform counters reach the page (names as runner/metrics.go exports them).
	if n := node(st, "per_call"); n.In == nil || *n.In != 1 || n.Errors == nil || *n.Errors != 1 || n.Out == nil || *n.Out != 0 {
		t.Errorf("per_call's counters in %v out %v errors %v, want 1 0 1 (its one row failed)", deref(n.In), deref(n.Out), deref(n.Errors))
	}
	if n := node(st, "per_call"); n.Layer != 1 || n.Row != 1 {
		t.Errorf("per_call placed at column %d row %d, want 1 1 (after accounts, below high_scores)", n.Layer, n.Row)
	}
	for _, c := range st.Commits {
		if c.SpecHash != r.plan.SpecHash || c.Version != "test" || c.Epoch == 0 {
			t.Errorf("commit %+v: want epoch > 0, spec hash %s, version test", c, r.plan.SpecHash)
		}
	}
	// Later, each sink shows its last few commits, newest first.
	st = r.waitFor(t, "more commits than are kept", func(st *webui.State) bool { return *st.Epochs > runner.KeptCommits })
	perSink := map[string][]uint64{}
	for _, c := range st.Commits {
		perSink[c.Sink] = append(perSink[c.Sink], c.Epoch)
	}
	for sink, epochs := range perSink {
		if len(epochs) != runner.KeptCommits || !slices.IsSortedFunc(epochs, func(a, b uint64) int { return cmp.Compare(b, a) }) {
			t.Errorf("%s's commits: epochs %v, want the last %d, newest first", sink, epochs, runner.KeptCommits)
		}
	}
	e := st.Errors[0]
	if e.Node != "per_call" || e.Output != "failed" || !strings.Contains(e.Row, "no quota left") {
		t.Errorf("error sample %+v: want per_call.failed with the mapping's message", e)
	}
	if strings.Contains(e.Row, apiKey) || !strings.Contains(e.Row, `"api_key":"<secret:api_key>"`) {
		t.Errorf("error sample does not mask the password: %s", e.Row)
	}
	if *st.ErrorRows != 1 || *node(st, "dead_letters").In != 1 {
		t.Errorf("error rows %v, dead_letters in %v: want 1 each", *st.ErrorRows, *node(st, "dead_letters").In)
	}

	before := *node(st, "events").Out
	r.waitFor(t, "events' rows out to rise", func(st *webui.State) bool { return *node(st, "events").Out > before })

	page := get(t, r.url+"/")
	for _, want := range []string{`<svg id="graph"`, `src="/ui/app.js"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if js := get(t, r.url+"/ui/app.js"); !strings.Contains(js, "/api/state") {
		t.Error("app.js does not ask /api/state")
	}
}

func deref(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

func containsEdge(edges []runner.GraphEdge, e runner.GraphEdge) bool {
	for _, x := range edges {
		if x == e {
			return true
		}
	}
	return false
}

// The page shows per-transform counts and lag when the build exports them, and null (a dash
// on the page) when it does not.
func TestOptionalMetrics(t *testing.T) {
	p, err := runner.LoadWith("testdata/live.yaml", runner.LoadOptions{Offline: true, Params: []templates.Param{
		{Name: "out", Value: t.TempDir()}, {Name: "api_key", Value: apiKey}}})
	if err != nil {
		t.Fatal(err)
	}
	serve := func(reg *prometheus.Registry) *webui.State {
		mux := http.NewServeMux()
		webui.New(webui.Config{Plan: p, Metrics: reg, Health: runner.NewHealth(), Recent: runner.NewRecent()}).Register(mux)
		srv := httptest.NewServer(mux)
		defer srv.Close()
		r := &liveRun{url: srv.URL, plan: p}
		return r.state(t)
	}

	st := serve(prometheus.NewRegistry())
	if n := node(st, "per_call"); n.In != nil || n.Out != nil || n.Errors != nil || len(st.Lag) != 0 {
		t.Errorf("without the metrics: per_call %+v, lag %+v; want nulls and no lag", n, st.Lag)
	}
	if st.Ready == "ok" {
		t.Error("a run that has not started is ready")
	}

	reg := prometheus.NewRegistry()
	vec := func(name string, labels ...string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: name, ConstLabels: prometheus.Labels{"pipeline": "live"}}, labels)
		reg.MustRegister(v)
		return v
	}
	vec("sluice_transform_rows_in_total", "transform").WithLabelValues("per_call").Set(3)
	out := vec("sluice_transform_rows_out_total", "transform", "output")
	out.WithLabelValues("per_call", "good").Set(2)
	out.WithLabelValues("per_call", "failed").Set(1)
	vec("sluice_transform_error_rows_total", "transform").WithLabelValues("per_call").Set(1)
	lagRecords := vec("sluice_source_lag_records", "source", "partition")
	lagRecords.WithLabelValues("events", "10").Set(7)
	lagRecords.WithLabelValues("events", "2").Set(5)
	vec("sluice_source_lag_seconds", "source", "partition").WithLabelValues("events", "2").Set(1.5)

	st = serve(reg)
	n := node(st, "per_call")
	if n.In == nil || *n.In != 3 || n.Out == nil || *n.Out != 3 || n.Errors == nil || *n.Errors != 1 ||
		n.Outputs["good"] != 2 || n.Outputs["failed"] != 1 {
		t.Errorf("per_call %+v: want in 3, out 3 (good 2, failed 1), errors 1", n)
	}
	if len(st.Lag) != 2 || st.Lag[0].Partition != "2" || *st.Lag[0].Records != 5 || *st.Lag[0].Seconds != 1.5 ||
		st.Lag[1].Partition != "10" || *st.Lag[1].Records != 7 || st.Lag[1].Seconds != nil {
		b, _ := json.Marshal(st.Lag)
		t.Errorf("lag %s: want partition 2 (5 records, 1.5 s) before partition 10 (7 records, no seconds)", b)
	}
}
