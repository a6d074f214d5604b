package sql

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
	_ "github.com/sluicehq/sluice/transforms/mapping" // MapToFields and Filter, which run language sql
	"gopkg.in/yaml.v3"
)

// schemaOf reads a schema from JSON Schema text (properties not required are nullable).
func schemaOf(src string) *schemas.Schema {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(src), &n); err != nil {
		panic(err)
	}
	s, err := schemas.ParseJSONSchema(n.Content[0])
	if err != nil {
		panic(err)
	}
	return s
}

// games are GAME_EVENT-like rows with a nullable number and a struct.
var games = schemaOf(`{type: object, required: [user, team, score, loc, ts], properties: {
  user: {type: string}, team: {type: string}, score: {type: integer}, ratio: {type: number},
  loc: {type: object, required: [city], properties: {city: {type: string},
    geo: {type: object, properties: {lat: {type: number}}}}},
  ts: {type: string, format: date-time}}}`)

var gameTime = time.Date(2024, 5, 1, 10, 30, 0, 0, time.UTC)

func gameRow() schemas.Row {
	return schemas.Row{"alice", "red", int64(12), nil, map[string]any{"city": "Paris", "geo": map[string]any{"lat": 48.85}}, gameTime}
}

// eval runs text as the one field of a MapToFields with language sql (or, filter, as a
// Filter's keep, giving whether the row is kept) on gameRow. The text stands at p.yaml:3:16.
func eval(t *testing.T, text string, filter bool) (any, schemas.Field, error) {
	t.Helper()
	src := "type: MapToFields\nconfig:\n  fields: {v: " + strconv.Quote(text) + "}\n  language: sql\n"
	if filter {
		src = "type: Filter\nconfig:\n  keep:        " + strconv.Quote(text) + "\n  language: sql\n"
	}
	b := componenttest.Env{File: "p.yaml"}.Build(t, "", src, games)
	if err := b.Err(); err != nil {
		return nil, schemas.Field{}, err
	}
	out := componenttest.Emitted{}
	err := b.Component.(component.Transform).Process(context.Background(), 0, batch(gameRow()), out.Emit)
	rows := out.Rows(component.Main)
	switch {
	case err != nil:
		return nil, schemas.Field{}, err
	case filter:
		return len(rows) == 1, schemas.Field{}, nil
	}
	return rows[0][0], b.Outputs[0].Schema.Fields[0], nil
}

func TestExpressions(t *testing.T) {
	for _, tt := range []struct {
		text string
		want any
		kind schemas.Kind
	}{
		{"score * 2 + 1", int64(25), schemas.Int64},
		{"score / 5", int64(2), schemas.Int64},
		{"score / 5.0", 2.4, schemas.Float64},
		{"`user` || '@' || team", "alice@red", schemas.String},
		{`"user"`, "alice", schemas.String},
		{"UPPER(loc.city)", "PARIS", schemas.String},
		{"loc.geo.lat", 48.85, schemas.Float64},
		{"PCOLLECTION.score", int64(12), schemas.Int64},
		{"ratio IS NULL", true, schemas.Bool},
		{"ratio > 1", nil, schemas.Bool},
		{"ratio > 1 OR score > 10", true, schemas.Bool}, // NULL OR TRUE is TRUE
		{"ratio > 1 AND score > 10", nil, schemas.Bool},
		{"ratio > 1 AND score > 99", false, schemas.Bool}, // NULL AND FALSE is FALSE
		{"CASE WHEN score > 10 THEN 1 ELSE 2.5 END", 1.0, schemas.Float64},
		{"CASE team WHEN 'blue' THEN 'b' END", nil, schemas.String},
		{"EXTRACT(HOUR FROM ts)", int64(10), schemas.Int64},
		{"CAST(ts + INTERVAL '90' MINUTE AS VARCHAR)", "2024-05-01 12:00:00", schemas.String},
		{"CAST(score AS DOUBLE) / 8", 1.5, schemas.Float64},
		{"CAST(2.9 AS BIGINT)", int64(2), schemas.Int64},
		{"user LIKE 'al%e'", true, schemas.Bool},
		{"user NOT LIKE '_lice'", false, schemas.Bool},
		{"ROUND(2.5)", 3.0, schemas.Float64},
		{"MOD(-7, 3)", int64(-1), schemas.Int64},
		{"SUBSTRING(user, 2)", "lice", schemas.String},
		{"POSITION('ic' IN user)", int64(3), schemas.Int64},
		{"COALESCE(ratio, 0)", 0.0, schemas.Float64},
		{"score", int64(12), schemas.Int64},
		{"SPLIT_PART('a@b.c', '@', 2)", "b.c", schemas.String},
		{"IF(score > 10, 'big', 'small')", "big", schemas.String},
		{"STRING_TO_ARRAY('go rust', ' ')", []any{"go", "rust"}, schemas.Array},
		{"ARRAY_TO_STRING(STRING_TO_ARRAY('a-b', '-'), '+')", "a+b", schemas.String},
		{"DATEDIFF('2024-05-03', ts)", int64(2), schemas.Int64},
		{"DATEDIFF(ts, '2024-05-01 23:59:59')", int64(0), schemas.Int64},
		{"DATE_FORMAT(ts, '%j %W %c/%e %k:%i %%')", "122 Wednesday 5/1 10:30 %", schemas.String},
		{"SUBSTRING_INDEX('www.example.com', '.', 2)", "www.example", schemas.String},
		{"SUBSTRING_INDEX('www.example.com', '.', -5)", "www.example.com", schemas.String},
		{"FORMAT_TIMESTAMP('%F %T', ts)", "2024-05-01 10:30:00", schemas.String},
		{"PARSE_TIMESTAMP('%d/%m/%Y %H:%M', '02/03/2024 07:45')", time.Date(2024, 3, 2, 7, 45, 0, 0, time.UTC), schemas.Timestamp},
		{"ts + INTERVAL '2' YEAR", time.Date(2026, 5, 1, 10, 30, 0, 0, time.UTC), schemas.Timestamp},
		{"CAST('2024-03-31' AS TIMESTAMP) - INTERVAL '1' MONTH", time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), schemas.Timestamp},
	} {
		t.Run(tt.text, func(t *testing.T) {
			v, f, err := eval(t, tt.text, false)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(v, tt.want) {
				t.Errorf("got %#v, want %#v", v, tt.want)
			}
			if f.Type.Kind != tt.kind {
				t.Errorf("type %v, want %v", f.Type.Kind, tt.kind)
			}
		})
	}
}

// TestFilterKeepsOnlyTrue: as WHERE, a NULL condition does not keep the row.
func TestFilterKeepsOnlyTrue(t *testing.T) {
	for text, want := range map[string]bool{"ratio > 1": false, "ratio IS NULL": true, "score > 1 OR ratio > 1": true} {
		kept, _, err := eval(t, text, true)
		if err != nil || kept != want {
			t.Errorf("%s: kept %v (%v), want %v", text, kept, err, want)
		}
	}
}

func TestErrors(t *testing.T) {
	for _, tt := range []struct{ text, want string }{
		{"score +", "p.yaml:3:23: SQL syntax error: the expression ends too soon"},
		{"scor > 1", `p.yaml:3:16: unknown column "scor" (did you mean "score"?)`},
		{"loc.geo.latt", `unknown field "latt" of loc.geo (did you mean "lat"?)`},
		{"score.x", "score is BIGINT, not a struct with fields"},
		{"score || 'x'", "p.yaml:3:16: CONCAT: argument 1 is BIGINT"},
		{"user = 1", "p.yaml:3:16: cannot compare VARCHAR with BIGINT"},
		{"CASE WHEN score THEN 1 END", "p.yaml:3:26: WHEN needs a BOOLEAN, but `score` is BIGINT"},
		{"SUM(score)", "p.yaml:3:16: the aggregate function SUM needs the Sql transform"},
		{"TUMBLE_START(ts, INTERVAL '1' HOUR)", "TUMBLE_START needs GROUP BY TUMBLE(...)"},
		{"score AS s", "language sql takes one expression here, without * or AS"},
		{"score, team", "not a query"},
		{"score / (score - 12)", "p.yaml:3:16: division by zero"},
		{"CAST(user AS BIGINT)", `p.yaml:3:16: cannot CAST the string "alice" AS BIGINT`},
		{"PARSE_TIMESTAMP('%Y-%m-%d', user)", `p.yaml:3:16: PARSE_TIMESTAMP: the string "alice" does not match the format "%Y-%m-%d"`},
		{"DATE_FORMAT(ts, '%Q')", "DATE_FORMAT: %Q is not a format element sluice knows"},
		{"DATEDIFF(user, ts)", `DATEDIFF: the string "alice" is not a timestamp`},
		{"DATE_FORMAT(score, '%Y')", "DATE_FORMAT: argument 1 is BIGINT"},
		{"COUNTIF(score > 1)", "the aggregate function COUNTIF needs the Sql transform"},
		{"ts + INTERVAL '1.5' MONTH", "INTERVAL needs a positive number (whole for MONTH and YEAR), not 1.5"},
	} {
		t.Run(tt.text, func(t *testing.T) {
			_, _, err := eval(t, tt.text, false)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestRewriteKeepsOffsets: every byte the parser reads maps back to the user's text, so
// that an error after a rewritten construct is still at its place.
func TestRewriteKeepsOffsets(t *testing.T) {
	text := "SELECT CAST(a AS VARCHAR(10)), TUMBLE(ts, INTERVAL '1' MINUTE), TRUE AS rank, SESSION(x) FROM t WHERE b"
	rw := rewrite(text)
	want := "SELECT sluice_cast(a , 'VARCHAR(10)'), TUMBLE(ts, sluice_interval('1', 'MINUTE')), (1=1) AS `rank`, sluice_session(x) FROM t WHERE b"
	if rw.text != want {
		t.Fatalf("rewritten\n%s\nwant\n%s", rw.text, want)
	}
	if got := rw.origin(strings.LastIndex(rw.text, "b")); got != strings.LastIndex(text, "b") {
		t.Errorf("the last byte maps to %d, want %d", got, strings.LastIndex(text, "b"))
	}
	if got := rw.origin(strings.Index(rw.text, "'MINUTE'")); text[got:got+6] != "MINUTE" {
		t.Errorf("the interval's unit maps to %q", text[got:])
	}
}

const groupedQuery = `
type: Sql
config:
  query: |
    SELECT team, COUNT(*) AS n, SUM(score) AS total,
           TUMBLE_END(ts, INTERVAL '1' MINUTE) AS until
    FROM PCOLLECTION
    GROUP BY team, TUMBLE(ts, INTERVAL '1' MINUTE)
    HAVING SUM(score) > 5
`

func batch(rows ...schemas.Row) *schemas.Batch {
	b := &schemas.Batch{Schema: games}
	for i, r := range rows {
		b.Rows = append(b.Rows, r)
		b.Pos = append(b.Pos, schemas.Position{Source: "s", Offset: int64(i)})
		b.Time = append(b.Time, time.Now())
	}
	return b
}

func game(team string, score int64, sec int) schemas.Row {
	return schemas.Row{"u", team, score, nil, map[string]any{"city": "x"}, gameTime.Add(time.Duration(sec) * time.Second)}
}

// TestGroupedStateSurvivesRestore: the grouped query's state is Combine's: what a snapshot
// holds comes back after a restore into a new instance, and its window fires there.
func TestGroupedStateSurvivesRestore(t *testing.T) {
	ctx := context.Background()
	first := componenttest.Env{}.Build(t, "", groupedQuery, games)
	if err := first.Err(); err != nil {
		t.Fatal(err)
	}
	if got := first.Outputs[0].Schema.Names(); !reflect.DeepEqual(got, []string{"team", "n", "total", "until"}) {
		t.Errorf("output columns %v", got)
	}
	tr := first.Component.(component.Stateful)
	out := componenttest.Emitted{}
	if err := tr.Process(ctx, 0, batch(game("red", 4, 1), game("blue", 2, 2)), out.Emit); err != nil {
		t.Fatal(err)
	}
	snap, err := tr.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	second := componenttest.Env{}.Build(t, "", groupedQuery, games).Component.(component.Stateful)
	if err := second.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if err := second.Process(ctx, 0, batch(game("red", 3, 20), game("red", 9, 70)), out.Emit); err != nil {
		t.Fatal(err)
	}
	if err := second.Fire(ctx, nil, true, out.Emit); err != nil {
		t.Fatal(err)
	}
	end := gameTime.Add(time.Minute)
	want := []schemas.Row{{"red", int64(2), int64(7), end}, {"red", int64(1), int64(9), end.Add(time.Minute)}}
	got := out.Rows(component.Main)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("fired %v, want %v (blue's 2 fails HAVING)", got, want)
	}
}

func TestGroupingErrors(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT team, COUNT(*) AS n FROM PCOLLECTION GROUP BY 3":                                                                             "GROUP BY 3: the SELECT list has 2 items",
		"SELECT team, COUNT(*) AS n FROM PCOLLECTION GROUP BY 2":                                                                             "GROUP BY 2 names an aggregate",
		"SELECT UPPER(team) AS t, COUNT(*) AS n FROM PCOLLECTION GROUP BY t":                                                                 "",
		"SELECT DISTINCT team, COUNT(*) AS n FROM PCOLLECTION GROUP BY team":                                                                 "SELECT DISTINCT with GROUP BY or aggregates is not supported",
		"SELECT TEAM, COUNT(*) AS n FROM PCOLLECTION GROUP BY team":                                                                          "",
		"SELECT * FROM PCOLLECTION GROUP BY team":                                                                                            "SELECT * is not supported with GROUP BY",
		"SELECT SUM(user) AS s FROM PCOLLECTION":                                                                                             "SUM needs numbers, but `user` is VARCHAR",
		"SELECT HOP_START(ts, INTERVAL '1' MINUTE) AS s FROM PCOLLECTION GROUP BY team":                                                      "HOP_START needs GROUP BY HOP(...)",
		"SELECT COUNT(*) AS n FROM PCOLLECTION GROUP BY TUMBLE(ts, 5)":                                                                       "TUMBLE needs an INTERVAL",
		"SELECT COUNT(*) AS n FROM PCOLLECTION GROUP BY TUMBLE(ts, INTERVAL '1' MONTH)":                                                      "TUMBLE needs an INTERVAL of fixed length",
		"SELECT COUNTIF(score) AS n FROM PCOLLECTION":                                                                                        "COUNTIF needs a BOOLEAN, but `score` is BIGINT",
		"SELECT COUNT(*) AS n FROM other":                                                                                                    `unknown table "other"`,
		"SELECT team FROM PCOLLECTION LIMIT 3":                                                                                               "LIMIT is not supported in Sql",
		"SELECT COUNT(*) AS n FROM PCOLLECTION GROUP BY SESSION(ts, INTERVAL '1' MINUTE), HOP(ts, INTERVAL '1' MINUTE, INTERVAL '2' MINUTE)": "GROUP BY has two windows",
	} {
		b := componenttest.Env{}.Build(t, "Sql", "config:\n  query: \""+q+"\"\n", games)
		if err := b.Err(); want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: error %v, want %q", q, err, want)
		}
	}
}

func TestParsesBeamsQueries(t *testing.T) {
	for _, q := range []string{
		"SELECT city, COUNT(*) AS person_count, AVG(age) AS avg_age FROM PCOLLECTION WHERE age >= 25 GROUP BY city ORDER BY city",
		"SELECT id, CASE WHEN price < 20 THEN 'Budget' WHEN price < 100 THEN 'Mid-range' ELSE 'Premium' END AS price_category FROM PCOLLECTION WHERE price > 10 ORDER BY price",
		"SELECT SUBSTR(name, 1, 10) AS short_name, LENGTH(name) AS name_length, NVL(name, 'Unknown') AS safe_name FROM PCOLLECTION",
	} {
		in := schemaOf(`{type: object, properties: {id: {type: integer}, name: {type: string}, city: {type: string},
  age: {type: integer}, price: {type: number}}}`)
		b := componenttest.Env{}.Build(t, "Sql", "config:\n  query: \""+q+"\"\n", in)
		if err := b.Err(); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}
