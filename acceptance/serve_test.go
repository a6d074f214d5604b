package acceptance

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sluice run --http-addr serves the metrics, the two probes and the web UI, 404 elsewhere (a probe or a
// scraper pointed at a wrong path fails), and the profiler only with --pprof. Readiness is
// false before the run has opened its sinks and sources and after it ended.
func TestHTTPEndpoints(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	dir := t.TempDir()
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, `pipeline:
  type: chain
  source:
    type: StreamingDataGenerator
    config: {schema_template: GAME_EVENT, qps: 200, seed: 1}
  sink:
    type: WriteToJson
    config: {path: `+filepath.Join(dir, "out")+`}
options: {checkpoint_interval: 200ms}
`)
	for _, withPprof := range []bool{false, true} {
		addr := freeAddr(t)
		args := []string{"run", pipeline, "--http-addr", addr, "--for", "2s"}
		if withPprof {
			args = append(args, "--pprof")
		}
		done := make(chan int, 1)
		go func() { code, _, _ := sluice(t, args...); done <- code }()
		get := func(path string) (int, string) {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				return 0, err.Error()
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			if code, _ := get("/readyz"); code == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				code, body := get("/readyz")
				t.Fatalf("/readyz did not answer 200 within 10 s: %d %s", code, body)
			}
			time.Sleep(20 * time.Millisecond)
		}
		checks := []struct {
			path string
			code int
			want string
		}{
			{"/healthz", 200, "alive"},
			{"/readyz", 200, "ready"},
			{"/metrics", 200, "sluice_records_read_total"},
			{"/", 200, `<svg id="graph"`},    // the web UI (cmd/sluice/webui)
			{"/api/state", 200, `"nodes":[`}, // its data
			{"/health", 404, ""},
			{"/metrics/x", 404, ""},
		}
		if withPprof {
			checks = append(checks, struct {
				path string
				code int
				want string
			}{"/debug/pprof/", 200, "goroutine"})
		} else {
			checks = append(checks, struct {
				path string
				code int
				want string
			}{"/debug/pprof/", 404, ""})
		}
		for _, c := range checks {
			if code, body := get(c.path); code != c.code || !strings.Contains(body, c.want) {
				t.Errorf("pprof %v: GET %s = %d %.200q, want %d with %q", withPprof, c.path, code, body, c.code, c.want)
			}
		}
		if code := <-done; code != exitOK {
			t.Fatalf("sluice run exited %d", code)
		}
	}
}

// Before the run has opened its source, /readyz says what it is doing, and /healthz that the
// process is alive: a Kafka broker that is not up yet is waited for (--startup-timeout).
func TestReadyzWhileStarting(t *testing.T) {
	skipIfShort(t)
	t.Parallel()
	dir := t.TempDir()
	pipeline := filepath.Join(dir, "p.yaml")
	writeFile(t, pipeline, `pipeline:
  type: chain
  source:
    type: ReadFromKafka
    config: {bootstrap_servers: "`+freeAddr(t)+`", topic: t, format: RAW}
  sink:
    type: WriteToJson
    config: {path: `+filepath.Join(dir, "out")+`}
`)
	addr := freeAddr(t)
	done := make(chan int, 1)
	go func() {
		code, _, _ := sluice(t, "run", pipeline, "--http-addr", addr, "--startup-timeout", "3s")
		done <- code
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable || !strings.HasPrefix(string(body), "not ready: ") {
				t.Fatalf("/readyz while the broker is down = %d %q, want 503 not ready: ...", resp.StatusCode, body)
			}
			if strings.Contains(string(body), "not ready: opening") { // past starting: it waits for the broker
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not say within 10 s that the run is opening its source: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if resp, err := http.Get("http://" + addr + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz while starting: %v %v, want 200", resp, err)
	}
	if code := <-done; code != exitRuntime {
		t.Fatalf("a run whose broker never came up exited %d, want %d", code, exitRuntime)
	}
}
