package templates

import (
	"encoding/json"
	"strings"
)

// Splicing placeholders into the real text. The template is rendered twice: with the real
// values, and with placeholders for the values that need them. Where the real text has a value
// exactly where the placeholder text has its placeholder (printed as it is, or as a JSON string
// by tojson), the placeholder is put back, so that YAML never reads the value; everything else
// (a value transformed by a filter, a computation) stays the real text.

// segment is a piece of the placeholder text: literal text, or a placeholder.
type segment struct {
	lit  string
	b    *binding // the placeholder's binding; nil for a transformed placeholder (e.g. upper)
	hole bool
}

// splitHoles cuts text into literal text and placeholders of the bindings in holes.
func (r *renderer) splitHoles(text string, holes map[string]bool) []segment {
	var out []segment
	lower := strings.ToLower(text)
	for {
		k := strings.Index(lower, holeMark)
		if k < 0 {
			break
		}
		out = appendSegment(out, segment{lit: text[:k]})
		n := holeLen(lower[k:])
		seg := segment{hole: true}
		for _, b := range r.binds {
			if b.unsafe && strings.HasPrefix(text[k:], b.holeText()) {
				seg.b, n = b, len(b.holeText())
				break
			}
		}
		if seg.b != nil && !holes[seg.b.name] {
			seg = segment{lit: text[k : k+n]} // another value's placeholder: the same in both texts
		}
		out = appendSegment(out, seg)
		text, lower = text[k+n:], lower[k+n:]
	}
	return appendSegment(out, segment{lit: text})
}

// appendSegment appends sg to segs, joining literal text.
func appendSegment(segs []segment, sg segment) []segment {
	if !sg.hole && sg.lit == "" {
		return segs
	}
	if n := len(segs); !sg.hole && n > 0 && !segs[n-1].hole {
		segs[n-1].lit += sg.lit
		return segs
	}
	return append(segs, sg)
}

// holeLen returns the length of the placeholder s starts with (in lower case): the mark, a
// number or "empty", and '_'.
func holeLen(s string) int {
	n := len(holeMark)
	for n < len(s) && (s[n] >= '0' && s[n] <= '9' || s[n] >= 'a' && s[n] <= 'z') {
		n++
	}
	if n < len(s) && s[n] == '_' {
		n++
	}
	return n
}

// piece is a part of the spliced text: real text, or a placeholder in place of real text.
type piece struct {
	real string
	hole string
}

// aligner matches the placeholder text's segments against the real text.
type aligner struct {
	segs  []segment
	real  string
	steps int
	out   []piece // in reverse order
}

// alignLimit bounds the search: a template whose texts do not line up quickly is rendered
// without placing (its values are read by YAML, as before).
const alignLimit = 200000

func (a *aligner) match(si, j int) bool {
	if a.steps++; a.steps > alignLimit {
		return false
	}
	if si == len(a.segs) {
		return j == len(a.real)
	}
	sg := a.segs[si]
	if !sg.hole {
		if !strings.HasPrefix(a.real[j:], sg.lit) || !a.match(si+1, j+len(sg.lit)) {
			return false
		}
		a.out = append(a.out, piece{real: sg.lit})
		return true
	}
	if sg.b != nil {
		for _, form := range a.forms(si) {
			if strings.HasPrefix(a.real[j:], form) && a.match(si+1, j+len(form)) {
				a.out = append(a.out, piece{real: form, hole: sg.b.holeText()})
				return true
			}
		}
	}
	// The template made something else of the value: take the real text up to where the
	// next literal text matches.
	next := ""
	if si+1 < len(a.segs) && !a.segs[si+1].hole {
		next = a.segs[si+1].lit
	}
	for m := j; m <= len(a.real); m++ {
		if next != "" {
			i := strings.Index(a.real[m:], next)
			if i < 0 {
				return false
			}
			m += i
		}
		if a.match(si+1, m) {
			a.out = append(a.out, piece{real: a.real[j:m]})
			return true
		}
		if a.steps > alignLimit {
			return false
		}
	}
	return false
}

// forms returns how the placeholder si can stand for its value in the real text: the value
// itself, or inside JSON string quotes its JSON encoding (tojson).
func (a *aligner) forms(si int) []string {
	v := a.segs[si].b.value
	forms := []string{v}
	if si > 0 && si+1 < len(a.segs) && strings.HasSuffix(a.segs[si-1].lit, `"`) && strings.HasPrefix(a.segs[si+1].lit, `"`) {
		if j, err := json.Marshal(v); err == nil && string(j[1:len(j)-1]) != v {
			forms = append(forms, string(j[1:len(j)-1]))
		}
	}
	return forms
}

// splice returns the real text with placeholders where the placeholder text shape has them and
// the real text has their values, and its line map (lines is the real text's); false when
// the texts do not line up.
func (r *renderer) splice(shape, real string, holes map[string]bool, lines lineMap) (string, lineMap, bool) {
	a := &aligner{segs: r.splitHoles(shape, holes), real: real}
	if !a.match(0, 0) {
		return "", nil, false
	}
	var b strings.Builder
	out := lineMap{lines.at(1)}
	rLine := 1
	for i := len(a.out) - 1; i >= 0; i-- {
		p := a.out[i]
		if p.hole != "" {
			b.WriteString(p.hole)
			rLine += strings.Count(p.real, "\n")
			continue
		}
		for _, c := range []byte(p.real) {
			b.WriteByte(c)
			if c == '\n' {
				rLine++
				out = append(out, lines.at(rLine))
			}
		}
	}
	return b.String(), out, true
}
