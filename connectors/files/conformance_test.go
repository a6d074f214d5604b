package files

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
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
