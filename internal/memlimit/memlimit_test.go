package memlimit

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// cgroupFS writes the files of a cgroup file system under a temporary root: path -> content.
func cgroupFS(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, s := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestLimit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		files      map[string]string
		procCgroup string
		want       int64 // 0: no limit
		wantErr    string
	}{
		{name: "v2 container", procCgroup: "0::/kubepods/pod1/c1\n",
			files: map[string]string{"kubepods/pod1/c1/memory.max": "536870912", "kubepods/pod1/memory.max": "max"},
			want:  512 << 20},
		{name: "v2 parent's limit is lower", procCgroup: "0::/kubepods/pod1/c1\n",
			files: map[string]string{"kubepods/pod1/c1/memory.max": "max", "kubepods/pod1/memory.max": "268435456"},
			want:  256 << 20},
		{name: "v2 no limit", procCgroup: "0::/user.slice\n",
			files: map[string]string{"user.slice/memory.max": "max"}},
		{name: "v2 namespaced root", procCgroup: "0::/\n", files: map[string]string{"memory.max": "1073741824"}, want: 1 << 30},
		{name: "v1", procCgroup: "4:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n",
			files: map[string]string{"memory/docker/abc/memory.limit_in_bytes": "402653184"},
			want:  384 << 20},
		{name: "v1 unlimited", procCgroup: "4:memory:/process_api/x\n",
			files: map[string]string{"memory/process_api/x/memory.limit_in_bytes": "9223372036854771712", "memory/memory.limit_in_bytes": "9223372036854771712"}},
		{name: "hybrid: v2 without memory, v1 limit", procCgroup: "4:cpu,memory:/ci\n0::/\n",
			files: map[string]string{"memory/ci/memory.limit_in_bytes": "104857600"},
			want:  100 << 20},
		{name: "no cgroup files", procCgroup: "0::/a/b\n", files: map[string]string{}},
		{name: "unreadable value", procCgroup: "0::/a\n", files: map[string]string{"a/memory.max": "lots"},
			wantErr: `the memory limit of cgroup /a: "lots" is not a number of bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := cgroupFS(t, tc.files)
			got, ok, err := Limit(root, []byte(tc.procCgroup))
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok != (tc.want != 0) || got != tc.want {
				t.Fatalf("limit %d (set %v), want %d", got, ok, tc.want)
			}
		})
	}
}

// TestApply checks what a user of a container with a memory limit gets: the Go runtime's
// limit at 90% of it, and a log line saying so; without a limit the runtime's stays off.
func TestApply(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })

	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	root := cgroupFS(t, map[string]string{"c/memory.max": "1000000000"})
	if got := apply(log, root, []byte("0::/c\n"), false); got != 900_000_000 {
		t.Fatalf("apply set %d, want 900000000", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 900_000_000 {
		t.Fatalf("the runtime's memory limit is %d, want 900000000", got)
	}
	if !strings.Contains(logs.String(), "go_memory_limit_bytes=900000000") {
		t.Fatalf("log does not say the limit: %s", logs.String())
	}

	debug.SetMemoryLimit(before)
	if got := apply(log, cgroupFS(t, map[string]string{"c/memory.max": "max"}), []byte("0::/c\n"), false); got != 0 {
		t.Fatalf("apply set %d without a container limit", got)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Fatalf("the runtime's memory limit changed to %d without a container limit", got)
	}
	// GOMEMLIMIT, which the runtime has read, wins over the container's limit.
	if got := apply(log, root, []byte("0::/c\n"), true); got != 0 || debug.SetMemoryLimit(-1) != before {
		t.Fatalf("apply set %d with GOMEMLIMIT set", got)
	}
}
