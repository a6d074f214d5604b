package mapping

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

var stamped = schemas.New(
	schemas.Field{Name: "id", Type: typ(schemas.Int64)},
	schemas.Field{Name: "ts", Type: typ(schemas.Any), Nullable: true},
	schemas.Field{Name: "at", Type: typ(schemas.Timestamp)},
	schemas.Field{Name: "secs", Type: typ(schemas.Float64)},
)

func stampedRows() *schemas.Batch {
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	return batch(stamped,
		schemas.Row{int64(1), "2024-05-01T12:00:00+02:00", at, 1714557600.25},
		schemas.Row{int64(2), int64(1714557600), at.Add(time.Second), 7.0},
		schemas.Row{int64(3), 1714557600.5, at.Add(2 * time.Second), -1.5},
		schemas.Row{int64(4), "yesterday", at, 0.0},
		schemas.Row{int64(5), nil, at, 0.0},
		schemas.Row{int64(6), true, at, 0.0},
	)
}

func TestAssignTimestamps(t *testing.T) {
	base := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		config string
		want   []time.Time
	}{
		{"config: {timestamp: at}", []time.Time{base, base.Add(time.Second), base.Add(2 * time.Second), base, base, base}},
		{"config: {timestamp: secs}", []time.Time{base.Add(250 * time.Millisecond), time.Unix(7, 0).UTC(), time.Unix(-2, 5e8).UTC(),
			time.Unix(0, 0).UTC(), time.Unix(0, 0).UTC(), time.Unix(0, 0).UTC()}},
		{"config: {timestamp: 'at + duration(\"1h\")'}", []time.Time{base.Add(time.Hour), base.Add(time.Hour + time.Second),
			base.Add(time.Hour + 2*time.Second), base.Add(time.Hour), base.Add(time.Hour), base.Add(time.Hour)}},
	}
	for _, tt := range tests {
		tr, ctx := mustBuild(t, "AssignTimestamps", tt.config, stamped)
		if outputSchema(t, ctx, component.Main) != stamped {
			t.Error("output schema is not the input schema")
		}
		out, err := run(t, tr, stampedRows())
		if err != nil {
			t.Fatalf("%s: %v", tt.config, err)
		}
		b := out[component.Main][0]
		if len(b.Time) != len(tt.want) {
			t.Fatalf("%s: %d times", tt.config, len(b.Time))
		}
		for i, w := range tt.want {
			if !b.Time[i].Equal(w) || b.Time[i].Location() != time.UTC {
				t.Errorf("%s: row %d time %v, want %v", tt.config, i, b.Time[i], w)
			}
		}
	}
}

// Strings in RFC 3339 and numbers of seconds are read; anything else is an error for the
// record, with its position.
func TestAssignTimestampsBadValues(t *testing.T) {
	tr, _ := mustBuild(t, "AssignTimestamps", "config:\n  timestamp: ts\n  error_handling: {output: bad}", stamped)
	out, err := run(t, tr, stampedRows())
	if err != nil {
		t.Fatal(err)
	}
	good := out[component.Main][0]
	want := []time.Time{time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), time.Unix(1714557600, 0).UTC(), time.Unix(1714557600, 5e8).UTC()}
	for i, w := range want {
		if !good.Time[i].Equal(w) {
			t.Errorf("row %d: %v, want %v", i, good.Time[i], w)
		}
	}
	bad := out.Rows("bad")
	msgs := []string{
		`AssignTimestamps 'step': timestamp "yesterday" is not an RFC 3339 time such as 2024-05-01T10:00:00Z`,
		"AssignTimestamps 'step': timestamp is null: not an event time",
		"AssignTimestamps 'step': timestamp is the value true: not an event time",
	}
	if len(bad) != len(msgs) {
		t.Fatalf("error rows %v", bad)
	}
	for i, m := range msgs {
		if bad[i][1] != m {
			t.Errorf("error %d: %q, want %q", i, bad[i][1], m)
		}
	}
	if pos := out.Positions("bad"); pos[0].Offset != 103 {
		t.Errorf("error position %v", pos[0])
	}

	tr, _ = mustBuild(t, "AssignTimestamps", "config: {timestamp: ts}", stamped)
	_, err = run(t, tr, stampedRows())
	var re *component.RowError
	if !errors.As(err, &re) || re.Pos.Offset != 103 {
		t.Errorf("without error_handling: %v", err)
	}
}

func TestAssignTimestampsConfigErrors(t *testing.T) {
	tests := []struct{ config, want string }{
		{"config: {timestamp: id > 1}", `p.yaml:1:21: timestamp must be a timestamp, a number of seconds since the epoch or an RFC 3339 string, but "id > 1" is a boolean`},
		{"config: {timestamp: tss}", `p.yaml:1:21: unknown field "tss" in the expression (did you mean "ts"?)`},
		{"config: {}", `p.yaml:1:9: AssignTimestamps 'step' needs config key "timestamp"`},
	}
	for _, tt := range tests {
		if got := buildError(t, "AssignTimestamps", tt.config, stamped); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.config, got, tt.want)
		}
	}
}

func TestEventTimeRange(t *testing.T) {
	for _, v := range []any{int64(1) << 40, 1e300, "0001-01-01T00:00:00Z"} {
		if _, err := EventTime(v); err == nil {
			t.Errorf("%v accepted", v)
		}
	}
}
