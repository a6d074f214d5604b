package schemas

import (
	"fmt"
	"slices"
	"strings"
)

// MaxDiffRows is the most rows a row diff lists on each side.
const MaxDiffRows = 20

// RowDiff shows the two sides of a comparison of rows, each row as its JSON, as pipeline
// tests and AssertEqual report a difference: the rows expected and not there, then those
// there and not expected, each side sorted and cut at MaxDiffRows, every line indented and
// ended by a newline. A side with no rows is left out.
func RowDiff(missing, unexpected []string) string {
	var b strings.Builder
	list := func(title string, rows []string) {
		if len(rows) == 0 {
			return
		}
		rows = slices.Sorted(slices.Values(rows))
		fmt.Fprintf(&b, "  %s:\n", title)
		for i, r := range rows {
			if i == MaxDiffRows {
				fmt.Fprintf(&b, "    ... and %d more\n", len(rows)-i)
				break
			}
			fmt.Fprintf(&b, "    %s\n", r)
		}
	}
	list("- expected, not there", missing)
	list("+ there, not expected", unexpected)
	return b.String()
}
