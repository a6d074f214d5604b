package iceberg

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

// maxRouteValue bounds the characters a field value adds to a table name.
const maxRouteValue = 64

// router names the table of each row from `table: db.events_{country}`: the placeholders are
// fields of the sink's input (before keep, drop or only), and only the table's name (the last
// part) may hold them. docs/iceberg.md has the sanitizing rule.
type router struct {
	namespace []string
	parts     []string // literal text, with placeholders at the odd indexes
	fields    []int    // the input index of each placeholder
	kinds     []schemas.Kind
	match     *regexp.Regexp // the table names the template can make
}

var placeholderRe = regexp.MustCompile(`\{([^{}]*)\}`)

// parseRouter parses a table template with placeholders over the fields of in; nil, nil
// when name has none.
func parseRouter(name string, in *schemas.Schema) (*router, error) {
	if !strings.ContainsAny(name, "{}") {
		return nil, nil
	}
	dot := strings.LastIndex(name, ".")
	ns, last := name[:max(dot, 0)], name[dot+1:]
	if strings.ContainsAny(ns, "{}") {
		return nil, fmt.Errorf("table %q: only the table's name may route by field, not its namespace", name)
	}
	if _, err := identifier(ns + ".x"); err != nil {
		return nil, fmt.Errorf("table %q: want namespace.table, as db.events_{country}", name)
	}
	r := &router{namespace: strings.Split(ns, ".")}
	pattern := "^"
	rest := last
	for {
		loc := placeholderRe.FindStringSubmatchIndex(rest)
		if loc == nil {
			break
		}
		lit := rest[:loc[0]]
		if strings.ContainsAny(lit, "{}") {
			return nil, fmt.Errorf("table %q: unbalanced { or }", name)
		}
		field := strings.TrimSpace(rest[loc[2]:loc[3]])
		r.parts = append(r.parts, lit, field)
		pattern += regexp.QuoteMeta(lit) + "[a-z0-9_]+"
		rest = rest[loc[1]:]
		if field == "" {
			return nil, fmt.Errorf("table %q: {} names no field", name)
		}
		i, ok := in.Index(field)
		if !ok {
			return nil, fmt.Errorf("table %q: no field %q in the input to route by%s", name, field, diag.DidYouMean(field, in.Names()))
		}
		f := in.Fields[i]
		switch f.Type.Kind {
		case schemas.String, schemas.Int64, schemas.Bool, schemas.Date:
		default:
			return nil, fmt.Errorf("table %q: cannot route by field %q of type %s (string, integer, boolean or date)", name, field, f.Type)
		}
		r.fields, r.kinds = append(r.fields, i), append(r.kinds, f.Type.Kind)
	}
	if strings.ContainsAny(rest, "{}") {
		return nil, fmt.Errorf("table %q: unbalanced { or }", name)
	}
	r.parts = append(r.parts, rest)
	r.match = regexp.MustCompile(pattern + regexp.QuoteMeta(rest) + "$")
	return r, nil
}

// tableOf returns the table name of row.
func (r *router) tableOf(row schemas.Row) (string, error) {
	var b strings.Builder
	b.WriteString(strings.Join(r.namespace, "."))
	b.WriteByte('.')
	for i, p := range r.parts {
		if i%2 == 0 {
			b.WriteString(p)
			continue
		}
		v, err := routeValue(row[r.fields[i/2]], r.kinds[i/2])
		if err != nil {
			return "", fmt.Errorf("routing field %q %w", p, err)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

var errNoRoute = errors.New("is null or empty: the row names no table")

// routeValue is the sanitized text of a routing field's value: lower case, every character
// other than a-z, 0-9 and _ replaced by _.
func routeValue(v any, kind schemas.Kind) (string, error) {
	var s string
	switch x := v.(type) {
	case nil:
		return "", errNoRoute
	case string:
		s = x
	case int64:
		s = strconv.FormatInt(x, 10)
	case bool:
		s = strconv.FormatBool(x)
	case time.Time:
		if kind != schemas.Date {
			return "", fmt.Errorf("holds %v, which is not a date", x)
		}
		s = x.Format(time.DateOnly)
	default:
		return "", fmt.Errorf("holds %v (%T), which cannot name a table", v, v)
	}
	if s == "" {
		return "", errNoRoute
	}
	out := make([]byte, 0, len(s))
	n := 0
	for _, c := range strings.ToLower(s) {
		if n++; n > maxRouteValue {
			return "", fmt.Errorf("holds %q, longer than %d characters", s, maxRouteValue)
		}
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' {
			out = append(out, byte(c))
		} else {
			out = append(out, '_')
		}
	}
	return string(out), nil
}
