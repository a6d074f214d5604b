package harness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one run of a process, its output in a log file.
type proc struct {
	cmd     *exec.Cmd
	logPath string
	exited  chan struct{} // closed when the process has exited
	err     error         // how it exited; read after exited is closed
}

// startProc starts bin args with its stdout and stderr in logPath. With ready set, it waits
// until a line of the output contains ready and returns the lines up to it.
func startProc(bin, logPath string, env []string, ready string, args ...string) (*proc, []string, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, nil, fmt.Errorf("start %s: %w", filepath.Base(logPath), err)
	}
	p := &proc{cmd: exec.Command(bin, args...), logPath: logPath, exited: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), env...)
	var lines chan string
	logged := make(chan struct{}) // closed when the output is all in the log
	var w *io.PipeWriter
	if ready == "" {
		p.cmd.Stdout, p.cmd.Stderr = f, f
		close(logged)
	} else { // copy the output to the log and watch it for the ready line
		var r *io.PipeReader
		r, w = io.Pipe()
		p.cmd.Stdout, p.cmd.Stderr = w, w
		lines = make(chan string, 256)
		go func() {
			defer close(logged)
			defer close(lines)
			sc := bufio.NewScanner(r)
			for sc.Scan() {
				fmt.Fprintln(f, sc.Text())
				select {
				case lines <- sc.Text():
				default: // nobody waits any more
				}
			}
			_, _ = io.Copy(io.Discard, r) // a line too long for the scanner
		}()
	}
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		if w != nil {
			w.Close()
		}
		<-logged
		f.Close()
		close(p.exited)
	}()
	if ready == "" {
		return p, nil, nil
	}
	var seen []string
	timeout := time.After(30 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				<-p.exited
				return nil, seen, fmt.Errorf("%s %s ended before it was ready (%v): %s", filepath.Base(bin), args[0], p.err, lastLines(p.logPath, 5))
			}
			seen = append(seen, line)
			if strings.Contains(line, ready) {
				return p, seen, nil
			}
		case <-timeout:
			p.kill()
			return nil, seen, fmt.Errorf("%s %s was not ready within 30s: %s", filepath.Base(bin), args[0], lastLines(p.logPath, 5))
		}
	}
}

func (p *proc) signal(sig syscall.Signal) { _ = p.cmd.Process.Signal(sig) }

// kill SIGKILLs the process (also a stopped one) and waits for it.
func (p *proc) kill() {
	p.signal(syscall.SIGKILL)
	<-p.exited
}

// wait waits at most d for the process to exit.
func (p *proc) wait(d time.Duration) bool {
	select {
	case <-p.exited:
		return true
	case <-time.After(d):
		return false
	}
}

// lastLines returns the last n lines of a log, joined by " | ".
func lastLines(path string, n int) string {
	b, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// freeAddr returns a loopback address with a port that is free now, for a broker that must
// come back on the same address after a restart.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// broker is a scenario's `sluice dev kafka` process, on a fixed address and data directory.
type broker struct {
	bin, addr, dataDir, logDir string
	// onExit hears of a run of the broker that exited unless kill or stop ended it.
	onExit func(p *proc)

	mu       sync.Mutex
	p        *proc
	starts   int
	expected bool // the current run is being killed or stopped
}

// start runs the broker (again); the first start creates the input topic.
func (b *broker) start(topic string, partitions int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	args := []string{"dev", "kafka", "--listen", b.addr, "--data-dir", b.dataDir}
	if b.starts == 0 {
		args = append(args, "--topic", fmt.Sprintf("%s:%d", topic, partitions))
	}
	b.starts++
	var err error
	for try := 0; try < 10; try++ { // the port may linger a moment after a SIGKILL
		var p *proc
		p, _, err = startProc(b.bin, filepath.Join(b.logDir, fmt.Sprintf("broker-%d.log", b.starts)), nil, "bootstrap_servers:", args...)
		if err == nil {
			b.p, b.expected = p, false
			go func() {
				<-p.exited
				b.mu.Lock()
				unexpected := b.p == p && !b.expected
				b.mu.Unlock()
				if unexpected && b.onExit != nil {
					b.onExit(p)
				}
			}()
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("broker start %d on %s: %w", b.starts, b.dataDir, err)
}

// end returns the broker's current run, marked as ending by the caller's kill or stop.
func (b *broker) end() *proc {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expected = true
	return b.p
}

// stop stops the broker gracefully at the end of a scenario.
func (b *broker) stop() {
	if p := b.end(); p != nil {
		p.signal(syscall.SIGTERM)
		if !p.wait(20 * time.Second) {
			p.kill()
		}
	}
}

// bigQuery is the `sluice dev bigquery` process the BigQuery scenarios share.
type bigQuery struct {
	p                *proc
	grpc, rest       string // the Storage Write API's address, the REST API's root URL
	project, dataset string
}

func startBigQuery(ctx context.Context, bin, dir string) (*bigQuery, error) {
	bq := &bigQuery{project: "chaos-test", dataset: "ds"}
	p, lines, err := startProc(bin, filepath.Join(dir, "bigquery.log"), nil, "REST:",
		"dev", "bigquery", "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", "--dataset", bq.project+":"+bq.dataset)
	if err != nil {
		return nil, err
	}
	bq.p = p
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "Storage Write API (gRPC): "); ok {
			bq.grpc = v
		}
		if v, ok := strings.CutPrefix(l, "REST: "); ok {
			bq.rest = strings.TrimSuffix(v, "/bigquery/v2/")
		}
	}
	if bq.grpc == "" || bq.rest == "" {
		p.kill()
		return nil, fmt.Errorf("sluice dev bigquery printed no addresses: %q", lines)
	}
	return bq, nil
}
