package generator

import (
	"context"
	"errors"
	"io"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
)

var env = componenttest.Env{Name: "gen"}

// open builds the source of the snippet and opens it at from.
func open(t *testing.T, src string, from schemas.Offsets) (*Source, *componenttest.Built) {
	t.Helper()
	b := env.Build(t, "StreamingDataGenerator", src)
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	s := b.Component.(*Source)
	if err := s.Open(context.Background(), from); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, b
}

// readN reads and decodes until n rows came out (or the end) and returns them.
func readN(t *testing.T, s *Source, n int) *schemas.Batch {
	t.Helper()
	all := &schemas.Batch{Schema: s.Schema()}
	out := componenttest.Emitted{}
	for len(out.Rows(component.Main)) < n {
		b, err := s.Read(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Decode(context.Background(), b, out.Emit); err != nil {
			t.Fatal(err)
		}
	}
	for _, b := range out[component.Main] {
		all.Rows = append(all.Rows, b.Rows...)
		all.Pos = append(all.Pos, b.Pos...)
		all.Time = append(all.Time, b.Time...)
	}
	return all
}

func TestGeneratorGameEvent(t *testing.T) {
	s, b := open(t, "config: {schema_template: game_event, seed: 7, messages_limit: 2500}", nil)
	want := "{eventId string, eventTimestamp integer, ipv4 string, ipv6 string, country string, username string, quest string, score integer, completed boolean}"
	if len(b.Outputs) != 1 || b.Outputs[0].Tag != component.Main || b.Outputs[0].Schema.String() != want {
		t.Fatalf("outputs %v, want one main output %s", b.Outputs, want)
	}
	got := readN(t, s, 1<<20)
	if len(got.Rows) != 2500 {
		t.Fatalf("read %d rows, want messages_limit 2500", len(got.Rows))
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	quests := map[any]int{}
	for i, row := range got.Rows {
		score := row[7].(int64)
		quests[row[6]]++
		if !uuid.MatchString(row[0].(string)) || score < 100 || score > 10000 {
			t.Fatalf("row %d: %v", i, row)
		}
		// The event time is the message's time: on a seeded stream, 1 ms apart from 2024-01-01.
		wantTime := DefaultStartTime.Add(time.Duration(i) * time.Millisecond)
		if !got.Time[i].Equal(wantTime) || row[1] != wantTime.UnixMilli() {
			t.Fatalf("row %d: time %v, eventTimestamp %v; want %v", i, got.Time[i], row[1], wantTime)
		}
		if got.Pos[i] != (schemas.Position{Source: "generator:gen", Offset: int64(i)}) {
			t.Fatalf("row %d at %v", i, got.Pos[i])
		}
	}
	if len(quests) != 3 {
		t.Errorf("quests %v, want the 3 of GAME_EVENT", quests)
	}
	if next, _ := s.Offsets().Get("generator:gen", 0); next != 2500 {
		t.Errorf("next offset %d, want 2500", next)
	}
	if _, err := s.Read(context.Background()); !errors.Is(err, io.EOF) {
		t.Errorf("Read after messages_limit: %v, want io.EOF", err)
	}
}

// Resuming at offset N regenerates exactly messages N.. of a fresh run, times included, so a
// pipeline restarted from a checkpoint is exactly once.
func TestGeneratorResume(t *testing.T) {
	const cfg = "config: {schema_template: LOG_ENTRY, seed: -5, qps: 100000, messages_limit: 3000, start_time: 2025-06-01T00:00:00Z}"
	fresh, _ := open(t, cfg, nil)
	all := readN(t, fresh, 1<<20)
	for _, from := range []int64{0, 1, 999, 1234, 2999, 3000} {
		resumed, _ := open(t, cfg, schemas.Offsets{"generator:gen": {0: from}})
		got := readN(t, resumed, 1<<20)
		if len(got.Rows) != len(all.Rows[from:]) || (len(got.Rows) > 0 && (!reflect.DeepEqual(got.Rows, all.Rows[from:]) ||
			!reflect.DeepEqual(got.Pos, all.Pos[from:]) || !reflect.DeepEqual(got.Time, all.Time[from:]))) {
			t.Fatalf("resumed at %d: %d rows differ from the fresh run's %d from there", from, len(got.Rows), len(all.Rows[from:]))
		}
	}
	// Message i of a seeded stream with qps is i/qps after start_time.
	if want := time.Date(2025, 6, 1, 0, 0, 0, 20_000_000, time.UTC); !all.Time[2000].Equal(want) {
		t.Errorf("message 2000 at %v, want %v", all.Time[2000], want)
	}
}

// Without a seed, messages carry the wall-clock time they were generated.
func TestGeneratorWallClock(t *testing.T) {
	before := time.Now()
	s, _ := open(t, `config: {schema: '{"t": {{timestamp()}}, "id": {{index()}}}', messages_limit: 10}`, nil)
	got := readN(t, s, 10)
	after := time.Now()
	for i, row := range got.Rows {
		ms := row[0].(int64)
		if got.Time[i].Before(before) || got.Time[i].After(after) || ms != got.Time[i].UnixMilli() || row[1] != int64(i) {
			t.Fatalf("row %d %v at %v, want a time between %v and %v", i, row, got.Time[i], before, after)
		}
	}
}

// qps paces messages smoothly: over about a second, about qps messages in small batches. The
// bounds are loose: this checks pacing, not the machine's speed.
func TestGeneratorPacing(t *testing.T) {
	s, _ := open(t, "config: {schema_template: GAME_EVENT, qps: 500}", nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	n, batches := 0, 0
	for {
		b, err := s.Read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.Fatal(err)
			}
			break
		}
		n += b.Len()
		batches++
	}
	if n < 250 || n > 750 {
		t.Errorf("%d messages in 1s at qps 500", n)
	}
	if batches < 20 {
		t.Errorf("%d messages came in %d batches: pacing should spread them", n, batches)
	}
	if next, _ := s.Offsets().Get("generator:gen", 0); next != int64(n) {
		t.Errorf("Offsets says %d, but Read returned %d messages", next, n)
	}
	t.Logf("qps 500: %d messages in %d batches in 1s", n, batches)
}

// A Read waiting for due messages returns promptly, with nothing, when its context is cancelled.
func TestGeneratorReadCancelled(t *testing.T) {
	s, _ := open(t, "config: {schema_template: GAME_EVENT, qps: 0.5}", nil)
	if b, err := s.Read(context.Background()); err != nil || b.Len() != 1 {
		t.Fatalf("first Read: %v, %v; want message 0 at once", b, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	b, err := s.Read(ctx)
	if b != nil || !errors.Is(err, context.Canceled) || time.Since(start) > time.Second {
		t.Fatalf("Read = %v, %v after %v; want nothing and context.Canceled soon after the cancel", b, err, time.Since(start))
	}
	if next, _ := s.Offsets().Get("generator:gen", 0); next != 1 {
		t.Errorf("next offset %d after a cancelled Read, want 1", next)
	}
}

// Decode sends a message that does not fit the inferred schema to the error output with its
// position, and keeps the others in order; without error_handling it stops with the position.
func TestGeneratorDecodeMismatch(t *testing.T) {
	src := `config: {schema: '{"n": {{integer(1, 9)}}}', error_handling: {output: bad}}`
	s, b := open(t, src, nil)
	if len(b.Outputs) != 2 || b.Outputs[1].Tag != "bad" || !b.Outputs[1].Errors {
		t.Fatalf("outputs %v", b.Outputs)
	}
	pos := func(i int64) schemas.Position { return schemas.Position{Source: "generator:gen", Offset: i} }
	ts := []time.Time{at, at.Add(1), at.Add(2)}
	in := &schemas.Batch{Raw: [][]byte{[]byte(`{"n": 1}`), []byte(`{"n": "x"}`), []byte(`{"n": 3}`)},
		Pos: []schemas.Position{pos(0), pos(1), pos(2)}, Time: ts}
	out := componenttest.Emitted{}
	if err := s.Decode(context.Background(), in, out.Emit); err != nil {
		t.Fatal(err)
	}
	if rows := out.Rows(component.Main); !reflect.DeepEqual(rows, []schemas.Row{{int64(1)}, {int64(3)}}) ||
		!reflect.DeepEqual(out.Positions(component.Main), []schemas.Position{pos(0), pos(2)}) || !out[component.Main][0].Time[1].Equal(ts[2]) {
		t.Errorf("good rows %v at %v", rows, out.Positions(component.Main))
	}
	bad := out.Rows("bad")
	if len(bad) != 1 || bad[0][0] != `{"n": "x"}` || !strings.Contains(bad[0][1].(string), "does not fit the schema inferred from samples") {
		t.Errorf("error rows %v", bad)
	}

	strict, _ := open(t, `config: {schema: '{"n": {{integer(1, 9)}}}'}`, nil)
	var re *component.RowError
	if err := strict.Decode(context.Background(), in, out.Emit); !errors.As(err, &re) || re.Pos != pos(1) {
		t.Errorf("without error_handling: %v, want a RowError at offset 1", err)
	}
}

// Config problems come with the file's line and column, inside the template too.
func TestGeneratorConfigErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"config:\n  schema: |\n    {\"a\": \"{{uuidd()}}\"}", `p.yaml:3:14: unknown function "uuidd" (did you mean "uuid"?)`},
		{"config:\n  schema: |\n    {\n      \"a\": {{integer(9, 1)}}\n    }", `p.yaml:4:22: integer(): the minimum 9 is greater than the maximum 1`},
		{"config:\n  schema: '{\"a\": {{bool(3)}}}'", `p.yaml:2:25: bool(): the probability 3 must be between 0 and 1`},
		{"config:\n  schema: |\n    {\"a\": {{firstName()}}}", `p.yaml:3:5: the template does not render a JSON object: sample message 0: invalid JSON: invalid character`},
		{"config:\n  schema: '[{{integer(1, 2)}}]'", `p.yaml:2:12: the template does not render a JSON object: sample message 0: want an object, got array`},
		{"config:\n  schema: |\n    {\"a\": \"{{concat(get(\"k\"))}}\"}", `p.yaml:3:21: get("k") has no put("k", ...) before it`},
		{"config:\n  schema: {a: b}", `p.yaml:2:11: "schema" must be the template's text, not a mapping or list`},
		{"config:\n  schema_template: GAME_EVENT\n  schema: '{}'", `p.yaml:3:11: give schema_template or schema, not both`},
		{"config:\n  qps: 10", `p.yaml:2:3: StreamingDataGenerator 'gen' needs config key "schema_template" (e.g. GAME_EVENT) or "schema" (a faker template)`},
		{"config:\n  schema_template: GAME_EVNT", `p.yaml:2:20: "schema_template" must be one of GAME_EVENT, LOG_ENTRY, not "GAME_EVNT" (did you mean "GAME_EVENT"?)`},
		{"config:\n  schema_template: GAME_EVENT\n  qps: -1", `p.yaml:3:8: qps must be a number of messages per second, 0 or more (0: as fast as possible)`},
		{"config:\n  schema_template: GAME_EVENT\n  messages_limit: -1", `p.yaml:3:19: messages_limit must be 0 (no limit) or more`},
		{"config:\n  schema_template: GAME_EVENT\n  output_type: AVRO", `p.yaml:3:16: output_type AVRO is not supported yet: use JSON (the rows are typed either way, by a schema inferred from sample messages)`},
		{"config:\n  schema_template: GAME_EVENT\n  start_time: 2024-01-01T00:00:00Z", `p.yaml:3:15: start_time sets the clock of a reproducible stream: it needs seed`},
		{"config:\n  schema_template: GAME_EVENT\n  seed: 1\n  start_time: yesterday", `p.yaml:4:15: start_time "yesterday" is not an RFC 3339 time such as 2024-01-01T00:00:00Z`},
		{"config:\n  schema_template: GAME_EVENT\n  qsp: 1", `p.yaml:3:3: unknown config key "qsp" in StreamingDataGenerator 'gen' (did you mean "qps"?)`},
	}
	for _, c := range cases {
		b := env.Build(t, "StreamingDataGenerator", c.src)
		if b.Component != nil || len(b.Diags) == 0 || !strings.HasPrefix(b.Diags[0], c.want) {
			t.Errorf("%s\n got %q\nwant %s", c.src, b.Diags, c.want)
		}
	}
}
