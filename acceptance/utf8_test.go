package acceptance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// jsonLines returns the JSON objects of every data file under dir (not _checkpoint.json).
func jsonLines(t *testing.T, dir string) []map[string]any {
	t.Helper()
	var out []map[string]any
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			out = append(out, m)
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInvalidUTF8IsABadRecord: a JSON record with invalid UTF-8 in a value or a key goes to
// the error output with its file and offset; it is not repaired into U+FFFD and written.
func TestInvalidUTF8IsABadRecord(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := `{"id": 1, "name": "Zoë"}` + "\n"
	badValue := "{\"id\": 2, \"name\": \"Zo\xeb\"}\n" // Latin-1, not UTF-8
	badKey := "{\"id\": 3, \"n\xffme\": \"x\"}\n"
	in := filepath.Join(dir, "in.jsonl")
	if err := os.WriteFile(in, []byte(good+badValue+badKey), 0o644); err != nil {
		t.Fatal(err)
	}
	pipeline := filepath.Join(dir, "p.yaml")
	src := fmt.Sprintf(`pipeline:
  transforms:
    - type: ReadFromJson
      name: people
      config:
        path: %s
        schema: {type: object, properties: {id: {type: integer}, name: {type: string}}}
        error_handling: {output: bad}
    - type: WriteToJson
      input: people
      config: {path: %s}
    - type: WriteToJson
      name: dead_letters
      input: people.bad
      config: {path: %s}
`, in, filepath.Join(dir, "good"), filepath.Join(dir, "bad"))
	if err := os.WriteFile(pipeline, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := sluice(t, "run", pipeline); code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	rows := jsonLines(t, filepath.Join(dir, "good"))
	if len(rows) != 1 || rows[0]["name"] != "Zoë" {
		t.Errorf("written: %v, want only record 1", rows)
	}
	bad := jsonLines(t, filepath.Join(dir, "bad"))
	if len(bad) != 2 {
		t.Fatalf("error output: %v, want the two records with invalid UTF-8", bad)
	}
	for i, off := range []int{len(good), len(good + badValue)} {
		msg, _ := bad[i]["error_message"].(string)
		source := fmt.Sprint(bad[i]["source"])
		if !strings.Contains(msg, "invalid UTF-8") || source != fmt.Sprintf("map[offset:%d partition:0 topic:file:%s]", off, in) {
			t.Errorf("error record %d: %v, want invalid UTF-8 at file:%s offset %d", i, bad[i], in, off)
		}
	}
}
