// Package memlimit gives the Go runtime a soft memory limit below the memory limit of the
// container (Linux cgroup) that sluice runs in, as github.com/KimMachineGun/automemlimit does
// for many Go services: the Go collector lets the heap grow to twice what is live
// (GOGC=100) and knows nothing of the container's limit, so a process whose live heap is
// under the limit can still be killed for memory by the kernel. With the runtime's limit set,
// the collector works harder as the heap nears it instead (docs/operations.md, "Memory").
package memlimit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// Ratio is the share of the container's limit given to the Go runtime; the rest is left for
// what the runtime does not count: the binary's file pages, and memory outside the Go heap.
const Ratio = 0.9

// unlimited is where a cgroup v1 limit means none: the kernel reports "no limit" as the
// largest page-aligned int64 (9223372036854771712).
const unlimited = int64(1) << 62

// Limit returns the memory limit, in bytes, of the cgroup a process is in, given the root of
// the cgroup file systems (/sys/fs/cgroup) and the process's /proc/PID/cgroup. A cgroup's
// parents' limits apply to it too, so the smallest on the path up to the root is returned.
// It reads cgroup v2 (memory.max) and, when that names no limit, cgroup v1
// (memory/.../memory.limit_in_bytes). ok is false when no limit is set.
func Limit(root string, procCgroup []byte) (limit int64, ok bool, err error) {
	v2, v1 := cgroupPaths(procCgroup)
	if v2 != "" {
		if limit, ok, err = smallest(root, v2, "memory.max"); ok || err != nil {
			return limit, ok, err
		}
	}
	if v1 != "" {
		return smallest(path.Join(root, "memory"), v1, "memory.limit_in_bytes")
	}
	return 0, false, nil
}

// cgroupPaths reads the cgroup v2 path ("0::/PATH") and the v1 memory controller's path
// ("N:memory:/PATH", possibly among other controllers) of a /proc/PID/cgroup file.
func cgroupPaths(procCgroup []byte) (v2, v1 string) {
	sc := bufio.NewScanner(bytes.NewReader(procCgroup))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			v2 = parts[2]
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			if c == "memory" {
				v1 = parts[2]
			}
		}
	}
	return v2, v1
}

// smallest is the smallest limit in file name of the cgroup dir under root and its parents.
// A file that is not there (the root cgroup has none; a hierarchy may not be mounted) sets
// no limit.
func smallest(root, dir, name string) (limit int64, ok bool, err error) {
	for d := path.Clean("/" + dir); ; d = path.Dir(d) {
		b, rerr := os.ReadFile(path.Join(root, d, name))
		switch {
		case errors.Is(rerr, fs.ErrNotExist):
		case rerr != nil:
			return 0, false, fmt.Errorf("reading the memory limit of cgroup %s: %w", d, rerr)
		default:
			s := strings.TrimSpace(string(b))
			if s != "max" {
				n, perr := strconv.ParseInt(s, 10, 64)
				if perr != nil {
					return 0, false, fmt.Errorf("the memory limit of cgroup %s: %q is not a number of bytes", d, s)
				}
				if n < unlimited && (!ok || n < limit) {
					limit, ok = n, true
				}
			}
		}
		if d == "/" {
			return limit, ok, nil
		}
	}
}

// Apply sets the Go runtime's memory limit to Ratio of the limit of the cgroup this process
// is in, unless GOMEMLIMIT is set (the runtime has read it: it wins) or there is no limit.
// It returns the limit it set, 0 for none, and logs what it did.
func Apply(log *slog.Logger) int64 {
	procCgroup, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0 // not Linux, or no cgroups: nothing to follow
	}
	_, goMemLimit := os.LookupEnv("GOMEMLIMIT")
	return apply(log, "/sys/fs/cgroup", procCgroup, goMemLimit)
}

// apply is Apply with the cgroup root, the process's cgroups and whether GOMEMLIMIT is set.
func apply(log *slog.Logger, root string, procCgroup []byte, goMemLimit bool) int64 {
	if goMemLimit {
		return 0
	}
	limit, ok, err := Limit(root, procCgroup)
	if err != nil {
		log.Warn("no Go memory limit from the container's: "+err.Error(), "hint", "set GOMEMLIMIT")
		return 0
	}
	if !ok {
		return 0
	}
	soft := int64(math.Floor(float64(limit) * Ratio))
	debug.SetMemoryLimit(soft)
	log.Info("Go memory limit set below the container's memory limit", "container_limit_bytes", limit,
		"go_memory_limit_bytes", soft, "hint", "GOMEMLIMIT overrides it")
	return soft
}
