package files

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// WriteToAvro's files read by Apache's own Avro C library (Debian's avro-bin: avrocat), which
// shares no code with the hamba/avro encoder that writes them.
func TestAvroReadByApacheAvroC(t *testing.T) {
	avrocat, err := exec.LookPath("avrocat")
	if err != nil {
		t.Skip("avrocat is not installed (Debian's avro-bin; .ci/run installs it)")
	}
	const n = 20
	dir := filepath.Join(t.TempDir(), "out")
	writeOutput(t, dir, fmt.Sprintf("type: WriteToAvro\nconfig:\n  path: %q\n", dir), flatSchema, flatRow, n)
	files, err := filepath.Glob(filepath.Join(dir, "epoch-*", "*.avro"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed Avro files in %s (%v)", dir, err)
	}
	var got, want []string
	for _, f := range files {
		out, err := exec.Command(avrocat, f).Output()
		if err != nil {
			t.Fatalf("avrocat %s: %v", f, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var r struct {
				ID    int64
				Name  any
				Score any
				OK    any
			}
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("avrocat printed %q: %v", line, err)
			}
			got = append(got, fmt.Sprintf("%d %v %v %v", r.ID, unionValue(r.Name), unionValue(r.Score), unionValue(r.OK)))
		}
	}
	for i := range n {
		r := flatRow(i)
		want = append(want, fmt.Sprintf("%d %v %v %v", r[0], r[1], r[2], r[3]))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("avrocat read\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// unionValue is the value of a nullable field as avrocat prints it: null, the value itself, or
// a union's {"type": value}.
func unionValue(v any) any {
	if m, ok := v.(map[string]any); ok && len(m) == 1 {
		for _, x := range m {
			return x
		}
	}
	return v
}
