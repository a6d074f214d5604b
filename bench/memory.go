package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Peak RSS is read from /proc/PID/status (VmHWM) while the process runs, not from wait4's
// ru_maxrss: on Linux a child's ru_maxrss includes the parent's RSS at the fork (os/exec
// forks with CLONE_VM, and exec records the old address space's high-water mark), so it
// never read below the harness's own RSS (184 MB at 200k records before this).
const rssPoll = 10 * time.Millisecond

// install copies the binary src to dst and returns dst. The runs measure the copy, so that
// their peak RSS is that of an installed binary whatever made src: a binary the Go linker
// has just written (go build) is cached in large page-cache folios, and Linux maps a whole
// cached folio into a process on its first touch, so the same binary's file pages (RssFile)
// were 95-100 MB at the start of main where a copy, or the file after its cached pages are
// dropped, has 66-68 MB (docs/operations.md, "Memory").
func install(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("the sluice binary: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", fmt.Errorf("copying the sluice binary: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", fmt.Errorf("copying the sluice binary %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("copying the sluice binary %s: %w", src, err)
	}
	return dst, nil
}

// rssPeak is what rssWatch saw: the peak RSS (VmHWM) and the largest anonymous RSS
// (RssAnon: the heap, stacks and the runtime's own memory, without the binary's file pages),
// both in MiB.
type rssPeak struct{ hwm, anon float64 }

// rssWatch polls the peak RSS of process pid until stop, which returns it in MiB (the
// tables' "peak RSS MB", as ru_maxrss was reported before).
func rssWatch(pid int) (stop func() rssPeak) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	done := make(chan struct{})
	var peak rssPeak
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(rssPoll)
		defer t.Stop()
		for {
			if st, ok := readStatus(path, "VmHWM:", "RssAnon:"); ok {
				peak.hwm = max(peak.hwm, st[0]/1024)
				peak.anon = max(peak.anon, st[1]/1024)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() rssPeak {
		close(done)
		wg.Wait()
		return peak
	}
}

// readStatus reads the lines named keys (values in KiB) of a /proc/PID/status file, in the
// order of keys; ok is false unless every one was there.
func readStatus(path string, keys ...string) (kb []float64, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	kb = make([]float64, len(keys))
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		for i, k := range keys {
			if v, cut := strings.CutPrefix(sc.Text(), k); cut {
				n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
				if err != nil {
					return nil, false
				}
				kb[i] = n
				found++
			}
		}
	}
	return kb, found == len(keys)
}

// heapWatch is --heapprofile-dir: the sluice process serves its profiler (--http-addr
// --pprof), and the harness keeps the heap profile taken when the heap in use was largest.
type heapWatch struct {
	addr string // where the process serves /debug/pprof/
	file string // where the profile goes
}

// newHeapWatch picks a free loopback port for a sluice process whose heap profile goes to
// file, and returns the flags that make it serve its profiler there.
func newHeapWatch(file string) (*heapWatch, []string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("a port for the profiler: %w", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return &heapWatch{addr: addr, file: file}, []string{"--http-addr", addr, "--pprof"}, nil
}

// heapPoll is how often the heap's size is read.
const heapPoll = 100 * time.Millisecond

// run polls the heap until ctx ends and writes the profile of the largest heap to h.file.
func (h *heapWatch) run(ctx context.Context) {
	var best []byte
	var bestInuse int64
	c := &http.Client{Timeout: 5 * time.Second}
	for ctx.Err() == nil {
		if inuse, ok := h.inuse(ctx, c); ok && inuse > bestInuse {
			if p, err := h.get(ctx, c, "/debug/pprof/heap"); err == nil {
				best, bestInuse = p, inuse
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(heapPoll):
		}
	}
	if best != nil {
		if err := os.WriteFile(h.file, best, 0o644); err != nil {
			progress("heap profile: %v", err)
		}
	}
}

// inuse is the heap in use as of the last GC, from the first line of the text heap profile
// ("heap profile: N: BYTES [...").
func (h *heapWatch) inuse(ctx context.Context, c *http.Client) (int64, bool) {
	b, err := h.get(ctx, c, "/debug/pprof/heap?debug=1")
	if err != nil {
		return 0, false
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	var objs, bytes_ int64
	if _, err := fmt.Sscanf(string(line), "heap profile: %d: %d", &objs, &bytes_); err != nil {
		return 0, false
	}
	return bytes_, true
}

func (h *heapWatch) get(ctx context.Context, c *http.Client, path string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+h.addr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", path, resp.Status)
	}
	return io.ReadAll(resp.Body)
}
