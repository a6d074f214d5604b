package sql

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

// gameEvent is a row like Beam's GAME_EVENT examples: user, team, score, timestamp.
var gameEvent = schemaOf(`{type: object, required: [user, team, score, ts], properties: {
  user: {type: string}, team: {type: string}, score: {type: integer}, ts: {type: string, format: date-time}}}`)

func gameBatch(n int) *schemas.Batch {
	teams := []string{"red", "blue", "green"}
	b := &schemas.Batch{Schema: gameEvent}
	for i := range n {
		b.Rows = append(b.Rows, schemas.Row{fmt.Sprintf("user-%d", i%997), teams[i%3], int64(i % 200),
			time.Date(2024, 5, 1, 10, 0, i%60, 0, time.UTC)})
		b.Pos = append(b.Pos, schemas.Position{Source: "s", Offset: int64(i)})
		b.Time = append(b.Time, time.Date(2024, 5, 1, 10, 0, i%60, 0, time.UTC))
	}
	return b
}

func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkQuery compares, on GAME_EVENT-like rows, a Sql query with the Filter and
// MapToFields (expr-lang) of the same meaning, each run as the runner runs transforms:
// Process on batches of 500 rows.
func BenchmarkQuery(b *testing.B) {
	const filter = `
config:
  keep: score >= 10 && user != "bot"
`
	const mapFields = `
config:
  fields:
    double: score * 2
    label: team + ":" + user
    big: score > 100 && team == "red"
`
	const query = `
config:
  query: |
    SELECT score * 2 AS double, team || ':' || user AS label, score > 100 AND team = 'red' AS big
    FROM PCOLLECTION WHERE score >= 10 AND user <> 'bot'
`
	build := func(b *testing.B, typ, src string, in *schemas.Schema) (component.Transform, *schemas.Schema) {
		built := componenttest.Env{}.Build(b, typ, src, in)
		if err := built.Err(); err != nil {
			b.Fatal(err)
		}
		return built.Component.(component.Transform), built.Outputs[0].Schema
	}
	for _, c := range []struct {
		name  string
		chain func(b *testing.B) []component.Transform
	}{
		{"filter+maptofields-expr", func(b *testing.B) []component.Transform {
			f, out := build(b, "Filter", filter, gameEvent)
			m, _ := build(b, "MapToFields", mapFields, out)
			return []component.Transform{f, m}
		}},
		{"sql-query", func(b *testing.B) []component.Transform {
			q, _ := build(b, "Sql", query, gameEvent)
			return []component.Transform{q}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			chain := c.chain(b)
			in := gameBatch(500)
			ctx := context.Background()
			out := 0
			var run func(i int, batch *schemas.Batch) error
			run = func(i int, batch *schemas.Batch) error {
				if i == len(chain) {
					out += len(batch.Rows)
					return nil
				}
				return chain[i].Process(ctx, 0, batch, func(tag string, next *schemas.Batch) error {
					return run(i+1, next)
				})
			}
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			b.ResetTimer()
			for b.Loop() {
				if err := run(0, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(in.Rows))/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(b.N*len(in.Rows))/(cpuTime(b)-cpu0).Seconds(), "rows/cpu-s")
			if out == 0 {
				b.Fatal("nothing out")
			}
		})
	}
}
