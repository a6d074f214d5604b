package mapping

import (
	"context"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

func TestAssertEqual(t *testing.T) {
	// Rows of orders: the expected element leaves amount and tags out (null) and gives the
	// price as an integer, which the float64 field takes.
	const config = "config:\n  elements:\n    - {id: 2, name: b, price: 3}\n    - {id: 1, name: a, amount: 5, price: 1.5, tags: [x]}\n"
	rowA := schemas.Row{int64(1), "a", int64(5), 1.5, []any{"x"}}
	rowB := schemas.Row{int64(2), "b", nil, 3.0, nil}
	rowC := schemas.Row{int64(3), "c", nil, 0.0, nil}
	for _, tt := range []struct {
		name    string
		batches [][]schemas.Row
		diff    string
	}{
		{"same rows in another order, over two batches", [][]schemas.Row{{rowB}, {rowA}}, ""},
		{"a row missing and one unexpected", [][]schemas.Row{{rowA, rowC}},
			"the input is not the expected elements:\n  2 arrived, 2 expected\n" +
				"  - expected, not there:\n    {\"id\":2,\"name\":\"b\",\"amount\":null,\"price\":3,\"tags\":null}\n" +
				"  + there, not expected:\n    {\"id\":3,\"name\":\"c\",\"amount\":null,\"price\":0,\"tags\":null}"},
		{"a row twice", [][]schemas.Row{{rowA, rowB, rowB}},
			"  3 arrived, 2 expected\n  + there, not expected:\n    {\"id\":2,"},
		{"nothing arrived", nil, "  0 arrived, 2 expected\n  - expected, not there:\n    {\"id\":1,"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tr, _ := mustBuild(t, "AssertEqual", config, orders)
			for _, rows := range tt.batches {
				if _, err := run(t, tr, batch(orders, rows...)); err != nil {
					t.Fatal(err)
				}
			}
			st := tr.(component.Stateful)
			if err := st.Fire(context.Background(), nil, false, nil); err != nil {
				t.Fatalf("compared before the input ended: %v", err)
			}
			err := st.Fire(context.Background(), nil, true, nil)
			switch {
			case tt.diff == "" && err != nil:
				t.Fatalf("failed: %v", err)
			case tt.diff != "" && (err == nil || !strings.Contains(err.Error(), tt.diff)):
				t.Fatalf("got %v, want an error with\n%s", err, tt.diff)
			}
		})
	}
}

func TestAssertEqualSurvivesARestart(t *testing.T) {
	const config = "config: {elements: [{id: 1, name: a, price: 1}, {id: 2, name: b, price: 2}]}"
	first, _ := mustBuild(t, "AssertEqual", config, orders)
	if _, err := run(t, first, batch(orders, schemas.Row{int64(1), "a", nil, 1.0, nil})); err != nil {
		t.Fatal(err)
	}
	snap, err := first.(component.Stateful).Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	second, _ := mustBuild(t, "AssertEqual", config, orders)
	st := second.(component.Stateful)
	if err := st.Restore(snap); err != nil {
		t.Fatal(err)
	}
	if _, err := run(t, second, batch(orders, schemas.Row{int64(2), "b", nil, 2.0, nil})); err != nil {
		t.Fatal(err)
	}
	if err := st.Fire(context.Background(), nil, true, nil); err != nil {
		t.Errorf("the rows before the restart were lost: %v", err)
	}
}

func TestAssertEqualBadElements(t *testing.T) {
	for _, tt := range []struct{ config, want string }{
		{"config: {elements: {id: 1}}", "1:20: elements must be a list"},
		{"config:\n  elements:\n    - {id: 1, nmae: a}\n", `3:7: element 1: field "nmae" is not in the input's rows`},
		{"config:\n  elements:\n    - {id: one}\n", `3:7: element 1: field "id": `},
		{"config: {elements: [1]}", "element 1: a plain value fits only rows of one field"},
	} {
		if got := buildError(t, "AssertEqual", tt.config, orders); !strings.Contains(got, tt.want) {
			t.Errorf("%s:\n got %s\nwant %s", tt.config, got, tt.want)
		}
	}
}
