package diag

import (
	"strings"
	"testing"
)

func TestSuggest(t *testing.T) {
	names := []string{"MapToFields", "Filter", "Explode", "ReadFromKafka"}
	cases := map[string]string{
		"MapToFeilds":   "MapToFields",
		"filter":        "Filter",
		"ReadFromKafak": "ReadFromKafka",
		"Window":        "",
		"x":             "",
		"Fitler":        "Filter",
	}
	for in, want := range cases {
		if got := Suggest(in, names); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestListSortedAndFormatted(t *testing.T) {
	var l List
	l.Add(Pos{File: "p.yaml", Line: 9, Col: 3}, "second")
	d := l.Add(Pos{File: "p.yaml", Line: 2, Col: 5}, "first %s", "problem")
	d.Detail = "try this"
	got := l.Err().Error()
	want := "p.yaml:2:5: first problem\n\thint: try this\np.yaml:9:3: second"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if !strings.HasPrefix(Pos{File: "f"}.String(), "f") || (List{}).Err() != nil {
		t.Fatal("empty list must be a nil error")
	}
}
