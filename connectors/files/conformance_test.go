package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/connectors/connectortest"
)

func TestSinkConformance(t *testing.T) {
	for _, d := range []component.Delivery{component.ExactlyOnce, component.AtLeastOnce} {
		t.Run(string(d), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			connectortest.TestSink(t, connectortest.SinkTarget{
				Delivery: d,
				New: func(t *testing.T) component.Sink {
					c, _ := mustBuild(t, fmt.Sprintf("type: WriteToJson\nconfig:\n  path: %q\n", dir), connectortest.Schema)
					return c.(*sink)
				},
				Visible: func(t *testing.T) []int64 {
					lines, err := ReadCommitted(dir)
					if errors.Is(err, fs.ErrNotExist) {
						return nil
					}
					if err != nil {
						t.Fatal(err)
					}
					ids := make([]int64, len(lines))
					for i, l := range lines {
						var r struct{ ID int64 }
						if err := json.Unmarshal(l, &r); err != nil {
							t.Fatal(err)
						}
						ids[i] = r.ID
					}
					return ids
				},
			})
		})
	}
}

func TestSourceConformance(t *testing.T) {
	const records = 40
	bad := []int{3, 17, 30}
	path := filepath.Join(t.TempDir(), "in.jsonl")
	var lines string
	for i := range records {
		if slices.Contains(bad, i) {
			lines += fmt.Sprintf("{\"id\": \"not a number %d\"}\n", i)
		} else {
			lines += fmt.Sprintf("{\"id\": %d, \"name\": \"row\"}\n", i)
		}
	}
	if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	connectortest.TestSource(t, connectortest.SourceTarget{Records: records, Bad: bad,
		New: func(t *testing.T, withErrors bool) component.Source {
			errorsTo := ""
			if withErrors {
				errorsTo = connectortest.ErrorsTag
			}
			s, _ := jsonSource(t, path, errorsTo)
			return s
		}})
}
