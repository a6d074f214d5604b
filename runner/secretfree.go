package runner

import (
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/templates"
)

// secretFree tells the problems (err, and the warnings of p) found in a rendered document that
// holds secrets as they are found in its copy with the secrets' masks in place of their values
// (templates.Result.DisplayDoc), so that no message quotes a secret, whatever it quotes: a
// problem the copy has at the same position is told as the copy tells it; one only the real
// values cause is told without its text. Nothing is searched for in the messages. The copy is
// checked as the document was (offline or not).
func secretFree(path string, r *templates.Result, err error, p *Plan, offline bool) error {
	list, _ := err.(diag.List)
	if len(list) == 0 && (p == nil || len(p.Warnings) == 0) {
		return err
	}
	shown, shownErr := parseWith(path, r.DocSource(), r.DisplayDoc(), offline)
	shownList, _ := shownErr.(diag.List)
	if p != nil {
		var shownWarnings diag.List
		if shown != nil {
			shownWarnings = shown.Warnings
		}
		p.Warnings = tellAs(p.Warnings, shownWarnings)
	}
	if len(list) == 0 {
		return err
	}
	return tellAs(list, shownList)
}

// tellAs returns the problems of real, each told as the problem of shown at its position.
func tellAs(real, shown diag.List) diag.List {
	if len(real) == 0 {
		return real
	}
	out := make(diag.List, len(real))
	used := make([]bool, len(shown))
	find := func(d diag.Diagnostic, same bool) int {
		for j, s := range shown {
			if !used[j] && s.Pos == d.Pos && (!same || s.Summary == d.Summary && s.Detail == d.Detail) {
				return j
			}
		}
		return -1
	}
	for i, d := range real {
		j := find(d, true)
		if j < 0 {
			j = find(d, false)
		}
		if j >= 0 {
			used[j] = true
			d.Summary, d.Detail = shown[j].Summary, shown[j].Detail
		} else {
			d.Summary = "invalid value (the message is not shown: it comes from the value of a secret parameter)"
			d.Detail = "`sluice render` shows where the template puts each secret"
		}
		out[i] = d
	}
	return out
}
