// Package webui is the live page of `sluice run --http-addr` (docs/operations.md, "Web UI"):
// at / the pipeline's graph (the one `sluice graph` draws) with each node's rows in and out,
// rates and errors, the lag per source partition, each sink's last commits with their lineage
// and the last rows sent to error outputs, secrets masked. The page polls /api/state once a
// second.
//
// The counters come from the run's Prometheus registry, as a scrape would read them, so the
// page shows whatever metrics the build exports and needs nothing from the runner's insides;
// what no counter says (commits, error rows) comes from runner.Recent. The page is plain
// HTML, CSS and JavaScript embedded in the binary: no CDN, no build step.
package webui

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicehq/sluice/runner"
)

//go:embed static
var static embed.FS

// Config is what the page shows: the run of Plan, its registry (required), and its Health and
// Recent as given to runner.Execute (when nil, the page says the run is not ready and shows
// no commits or error rows).
type Config struct {
	Plan    *runner.Plan
	Metrics prometheus.Gatherer
	Health  *runner.Health
	Recent  *runner.Recent
}

// Server serves the page and its state.
type Server struct {
	cfg Config
}

// New returns the server of the page of cfg's run.
func New(cfg Config) *Server {
	if cfg.Health == nil {
		cfg.Health = runner.NewHealth()
	}
	if cfg.Recent == nil {
		cfg.Recent = runner.NewRecent()
	}
	return &Server{cfg: cfg}
}

// Register adds the page's routes to mux: / (the page), /ui/ (its files) and /api/state.
func (s *Server) Register(mux *http.ServeMux) {
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux.Handle("GET /{$}", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeFileFS(w, r, files, "index.html")
	}))
	mux.Handle("GET /ui/", http.StripPrefix("/ui/", http.FileServerFS(files)))
	mux.HandleFunc("GET /api/state", s.serveState)
}

func (s *Server) serveState(w http.ResponseWriter, _ *http.Request) {
	st, err := s.state()
	if err != nil {
		http.Error(w, "reading the run's metrics: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(st) // a client that went away is not the server's problem
}
