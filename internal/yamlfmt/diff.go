package yamlfmt

import (
	"bytes"
	"fmt"
	"strings"
)

// context is the number of unchanged lines shown around a change.
const context = 3

// maxEdits bounds the work of the line diff: past it, Diff shows the whole file replaced.
const maxEdits = 2000

// edit is one line of an edit script: ' ' kept, '-' removed from a, '+' added from b.
type edit struct {
	op   byte
	text string
	a, b int // 0-based line numbers in a and b before this line
}

// Diff returns a unified diff from a (named oldName) to b (named newName), "" when they are
// equal.
func Diff(oldName, newName string, a, b []byte) string {
	if bytes.Equal(a, b) {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	edits := lineDiff(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	for i := 0; i < len(edits); {
		if edits[i].op == ' ' {
			i++
			continue
		}
		// A hunk: from context lines before this change to context lines after the last
		// change that is at most 2*context kept lines away from the previous one.
		start := max(0, i-context)
		end := i
		for j := i; j < len(edits); j++ {
			if edits[j].op != ' ' {
				end = j
			} else if j-end > 2*context {
				break
			}
		}
		stop := min(len(edits), end+context+1)
		writeHunk(&out, edits[start:stop])
		i = stop
	}
	return out.String()
}

func writeHunk(out *strings.Builder, h []edit) {
	na, nb := 0, 0
	for _, e := range h {
		if e.op != '+' {
			na++
		}
		if e.op != '-' {
			nb++
		}
	}
	fmt.Fprintf(out, "@@ -%s +%s @@\n", hunkRange(h[0].a, na), hunkRange(h[0].b, nb))
	for _, e := range h {
		out.WriteByte(e.op)
		out.WriteString(e.text)
		if !strings.HasSuffix(e.text, "\n") {
			out.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange formats a hunk's range as GNU diff does: "start,count", ",1" left out, and the
// line before when the count is zero.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// splitLines splits s into lines that keep their "\n" (the last one may have none).
func splitLines(s []byte) []string {
	var lines []string
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, string(s))
			break
		}
		lines = append(lines, string(s[:i+1]))
		s = s[i+1:]
	}
	return lines
}

// lineDiff returns a shortest edit script from a to b (Myers' algorithm), or the whole of a
// removed and b added when they differ in more than maxEdits lines.
func lineDiff(a, b []string) []edit {
	n, m := len(a), len(b)
	off := n + m + 1
	v := make([]int, 2*off+1)
	var trace [][]int // trace[d] holds v[-d..d] at the start of round d
	for d := 0; d <= min(n+m, maxEdits); d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			x := v[off+k-1] + 1
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(a, b, trace)
			}
		}
	}
	var edits []edit
	for i, l := range a {
		edits = append(edits, edit{'-', l, i, 0})
	}
	for j, l := range b {
		edits = append(edits, edit{'+', l, n, j})
	}
	return edits
}

// backtrack walks the trace of lineDiff back from the end to build the edit script.
func backtrack(a, b []string, trace [][]int) []edit {
	x, y := len(a), len(b)
	var rev []edit
	for d := len(trace) - 1; d > 0; d-- {
		at := func(k int) int { return trace[d][k+d] } // v[k] at the start of round d
		k := x - y
		prev := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			prev = k + 1
		}
		px := at(prev)
		py := px - prev
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, edit{' ', a[x], x, y})
		}
		if x == px {
			y--
			rev = append(rev, edit{'+', b[y], x, y})
		} else {
			x--
			rev = append(rev, edit{'-', a[x], x, y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, edit{' ', a[x], x, y})
	}
	edits := make([]edit, len(rev))
	for i, e := range rev {
		edits[len(rev)-1-i] = e
	}
	return edits
}
