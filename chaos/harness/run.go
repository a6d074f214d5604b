package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
)

// Run runs every scenario of cfg (cfg.Parallel at a time) and returns their results in the
// order of cfg.Sinks and cfg.Deliveries. The error is for a run that could not start.
func Run(ctx context.Context, cfg Config) ([]*Result, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		return nil, fmt.Errorf("chaos: no work directory")
	}
	bin := cfg.Sluice
	if bin == "" {
		var err error
		if bin, err = Build(ctx, cfg.Dir); err != nil {
			return nil, err
		}
	}
	specs := cfg.scenarios()
	var bq *bigQuery
	if slices.Contains(cfg.Sinks, SinkBigQuery) {
		var err error
		if bq, err = startBigQuery(ctx, bin, cfg.Dir); err != nil {
			return nil, err
		}
		defer bq.p.kill()
	}
	parallel := cfg.Parallel
	if parallel <= 0 {
		parallel = len(specs)
	}
	sem := make(chan struct{}, parallel)
	results := make([]*Result, len(specs))
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = runScenario(ctx, cfg, spec, bin, filepath.Join(cfg.Dir, spec.name()), bq)
		}()
	}
	wg.Wait()
	return results, nil
}

// Build builds the sluice binary of the module the working directory is in, into dir.
func Build(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "sluice")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/sluicehq/sluice/cmd/sluice")
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build sluice: %w\n%s", err, out)
	}
	return bin, nil
}
