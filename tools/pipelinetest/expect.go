package pipelinetest

import (
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

// expectation is one expected_inputs or expected_outputs entry and what arrived there.
type expectation struct {
	spec Elements
	what string // "receives" or "emits on TAG", for messages
	want []testRow
	got  []testRow
}

// testRow is a row in the form expectations compare: each field's value as JSON, and the
// whole row as JSON for messages.
type testRow struct {
	fields map[string]string
	// given, for a partial expected row, lists the fields it compares.
	given map[string]bool
	text  string
}

// expectation converts an expectation's elements against schema s. Rows of an error output
// compare only the fields an expected element gives: messages, stacks and sources are long.
func (r *testRun) expectation(x Elements, what string, s *schemas.Schema, partial bool) *expectation {
	e := &expectation{spec: x, what: what}
	for i, el := range x.Elements {
		row, given, err := toTestRow(el, s, partial)
		if err != nil {
			r.diags.Add(diag.At(x.Pos.File, el), "element %d of %s: %v", i+1, x.Name, err)
			continue
		}
		tr := newTestRow(s, row)
		if partial {
			tr.given = given
			tr.text = partialText(s, row, given)
		}
		e.want = append(e.want, tr)
	}
	r.order = append(r.order, e)
	return e
}

func (r *testRun) expectations() []*expectation { return r.order }

func newTestRow(s *schemas.Schema, row schemas.Row) testRow {
	t := testRow{fields: make(map[string]string, len(s.Fields)), text: string(schemas.AppendJSON(nil, s, row))}
	for i, f := range s.Fields {
		t.fields[f.Name] = fieldJSON(f, row[i])
	}
	return t
}

// fieldJSON is one field's value as the row encoder writes it: {"name":value}.
func fieldJSON(f schemas.Field, v any) string {
	return string(schemas.AppendJSON(nil, schemas.New(f), schemas.Row{v}))
}

// partialText shows the fields a partial expected row gives.
func partialText(s *schemas.Schema, row schemas.Row, given map[string]bool) string {
	var fields []schemas.Field
	var vals schemas.Row
	for i, f := range s.Fields {
		if given[f.Name] {
			fields, vals = append(fields, f), append(vals, row[i])
		}
	}
	return string(schemas.AppendJSON(nil, schemas.New(fields...), vals))
}

// add records a batch that arrived.
func (e *expectation) add(b *schemas.Batch) {
	for _, row := range b.Rows {
		e.got = append(e.got, newTestRow(b.Schema, row))
	}
}

func (w testRow) matches(g testRow) bool {
	if w.given == nil {
		if len(w.fields) != len(g.fields) {
			return false
		}
		for k, v := range w.fields {
			if g.fields[k] != v {
				return false
			}
		}
		return true
	}
	for k, ok := range w.given {
		if ok && g.fields[k] != w.fields[k] {
			return false
		}
	}
	return true
}

// compare matches the rows that arrived with the expected ones, in any order, and returns a
// diff when they differ, else "".
func (e *expectation) compare() string {
	used := make([]bool, len(e.got))
	var missing, unexpected []string
	for _, w := range e.want {
		found := false
		for i, g := range e.got {
			if !used[i] && w.matches(g) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, w.text)
		}
	}
	for i, g := range e.got {
		if !used[i] {
			unexpected = append(unexpected, g.text)
		}
	}
	if len(missing) == 0 && len(unexpected) == 0 {
		return ""
	}
	head := fmt.Sprintf("%s: %s %s %d %s, expected %d\n", e.spec.Pos, e.spec.Name, e.what, len(e.got), plural(len(e.got), "row"), len(e.want))
	return strings.TrimRight(head+schemas.RowDiff(missing, unexpected), "\n")
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
