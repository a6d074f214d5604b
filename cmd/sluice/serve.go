package main

import (
	"fmt"
	"net/http"
	"net/http/pprof"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sluicehq/sluice/cmd/sluice/webui"
	"github.com/sluicehq/sluice/runner"
)

// httpHandler serves a run's endpoints (docs/operations.md, "HTTP endpoints"): /metrics,
// /healthz (the epoch loop comes round), /readyz (opened and running), the web UI at / with
// its files under /ui/ and its data at /api/state, the profiler under /debug/pprof/ only when
// asked for, and 404 on every other path, so that a probe pointed at the wrong path fails
// instead of passing.
func httpHandler(p *runner.Plan, reg *prometheus.Registry, health *runner.Health, recent *runner.Recent, withPprof bool) http.Handler {
	mux := http.NewServeMux()
	webui.New(webui.Config{Plan: p, Metrics: reg, Health: health, Recent: recent}).Register(mux)
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", probe(health.Live, "alive"))
	mux.HandleFunc("GET /readyz", probe(health.Ready, "ready"))
	if withPprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// probe answers 200 with ok, or 503 with why not.
func probe(check func() error, ok string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := check(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "not %s: %v\n", ok, err)
			return
		}
		fmt.Fprintln(w, ok)
	}
}
