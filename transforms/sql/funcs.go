package sql

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

func newRestoreCtx(b *strings.Builder) *format.RestoreCtx {
	return format.NewRestoreCtx(format.DefaultRestoreFlags, b)
}

// function is a scalar function of Calcite's standard library.
type function struct {
	min, max int // arguments; max -1: any number
	// result checks the arguments' types and gives the result's, or says what is wrong.
	result func(args []schemas.Type) (schemas.Type, string)
	// call computes the result from non-null arguments (a null argument gives null).
	call func(args []any) (any, error)
}

// sameAs returns a result type checker that wants arguments of the kinds want (a kind per
// argument; the last repeats) and gives out, or the first argument's type when out is Any.
func sameAs(out schemas.Type, want ...func(schemas.Type) bool) func([]schemas.Type) (schemas.Type, string) {
	return func(args []schemas.Type) (schemas.Type, string) {
		for i, a := range args {
			w := want[min(i, len(want)-1)]
			if a.Kind != schemas.Any && !w(a) {
				return out, fmt.Sprintf("argument %d is %s", i+1, sqlName(a))
			}
		}
		if out.Kind == schemas.Any && len(args) > 0 {
			return args[0], ""
		}
		return out, ""
	}
}

func isString(t schemas.Type) bool { return t.Kind == schemas.String }

// tStrings is ARRAY<VARCHAR>.
var tStrings = schemas.Type{Kind: schemas.Array, Elem: &tString}

func isTime(t schemas.Type) bool { return t.Kind == schemas.Timestamp }
func anyType(schemas.Type) bool  { return true }

func str(v any) string { s, _ := v.(string); return s }

// floatFn applies f to a number, giving a DOUBLE.
func floatFn(f func(float64) float64) function {
	return function{min: 1, max: 1, result: sameAs(tFloat, isNumber), call: func(a []any) (any, error) {
		return f(toFloat(a[0])), nil
	}}
}

// keepIntFn applies f to a DOUBLE and leaves a BIGINT as it is (FLOOR, CEIL).
func keepIntFn(f func(float64) float64) function {
	return function{min: 1, max: 1, result: sameAs(tAny, isNumber), call: func(a []any) (any, error) {
		if i, ok := a[0].(int64); ok {
			return i, nil
		}
		return f(toFloat(a[0])), nil
	}}
}

// functions are the scalar functions by lower-case name.
var functions = map[string]function{
	"char_length": {min: 1, max: 1, result: sameAs(tInt, isString), call: func(a []any) (any, error) {
		return int64(utf8.RuneCountInString(str(a[0]))), nil
	}},
	"upper": {min: 1, max: 1, result: sameAs(tString, isString), call: func(a []any) (any, error) { return strings.ToUpper(str(a[0])), nil }},
	"lower": {min: 1, max: 1, result: sameAs(tString, isString), call: func(a []any) (any, error) { return strings.ToLower(str(a[0])), nil }},
	"initcap": {min: 1, max: 1, result: sameAs(tString, isString), call: func(a []any) (any, error) {
		prev := ' '
		return strings.Map(func(r rune) rune {
			defer func() { prev = r }()
			if unicode.IsLetter(prev) || unicode.IsDigit(prev) {
				return unicode.ToLower(r)
			}
			return unicode.ToUpper(r)
		}, str(a[0])), nil
	}},
	"ltrim":     {min: 1, max: 1, result: sameAs(tString, isString), call: func(a []any) (any, error) { return strings.TrimLeft(str(a[0]), " "), nil }},
	"rtrim":     {min: 1, max: 1, result: sameAs(tString, isString), call: func(a []any) (any, error) { return strings.TrimRight(str(a[0]), " "), nil }},
	"substring": {min: 2, max: 3, result: sameAs(tString, isString, isInt), call: substring},
	"position": {min: 2, max: 2, result: sameAs(tInt, isString), call: func(a []any) (any, error) {
		i := strings.Index(str(a[1]), str(a[0]))
		if i < 0 {
			return int64(0), nil
		}
		return int64(utf8.RuneCountInString(str(a[1])[:i]) + 1), nil
	}},
	"concat": {min: 1, max: -1, result: sameAs(tString, isString), call: func(a []any) (any, error) {
		var b strings.Builder
		for _, s := range a {
			b.WriteString(str(s))
		}
		return b.String(), nil
	}},
	"split_part": {min: 3, max: 3, result: sameAs(tString, isString, isString, isInt), call: func(a []any) (any, error) {
		parts, n := strings.Split(str(a[0]), str(a[1])), a[2].(int64)
		if n < 1 || n > int64(len(parts)) {
			return "", nil
		}
		return parts[n-1], nil
	}},
	"string_to_array": {min: 2, max: 2, result: sameAs(tStrings, isString), call: func(a []any) (any, error) {
		var out []any
		for _, p := range strings.Split(str(a[0]), str(a[1])) {
			out = append(out, p)
		}
		return out, nil
	}},
	"array_to_string": {min: 2, max: 2, result: func(t []schemas.Type) (schemas.Type, string) {
		if t[0].Kind != schemas.Array || t[0].Elem == nil || t[0].Elem.Kind != schemas.String || t[1].Kind != schemas.String {
			return tString, "it takes an ARRAY of VARCHAR and a VARCHAR"
		}
		return tString, ""
	}, call: func(a []any) (any, error) {
		list, _ := a[0].([]any)
		parts := make([]string, 0, len(list))
		for _, v := range list {
			if v != nil {
				parts = append(parts, str(v))
			}
		}
		return strings.Join(parts, str(a[1])), nil
	}},
	"replace": {min: 3, max: 3, result: sameAs(tString, isString), call: func(a []any) (any, error) {
		return strings.ReplaceAll(str(a[0]), str(a[1]), str(a[2])), nil
	}},
	"abs": {min: 1, max: 1, result: sameAs(tAny, isNumber), call: func(a []any) (any, error) {
		if i, ok := a[0].(int64); ok {
			return max(i, -i), nil
		}
		return math.Abs(toFloat(a[0])), nil
	}},
	"round": {min: 1, max: 2, result: sameAs(tAny, isNumber, isInt), call: func(a []any) (any, error) {
		n := int64(0)
		if len(a) > 1 {
			n = a[1].(int64)
		}
		if i, ok := a[0].(int64); ok && n >= 0 {
			return i, nil
		}
		p := math.Pow(10, float64(n))
		return math.Round(toFloat(a[0])*p) / p, nil // half away from zero, as Calcite
	}},
	"floor": keepIntFn(math.Floor),
	"ceil":  keepIntFn(math.Ceil),
	"power": {min: 2, max: 2, result: sameAs(tFloat, isNumber), call: func(a []any) (any, error) {
		return math.Pow(toFloat(a[0]), toFloat(a[1])), nil
	}},
	"mod": {min: 2, max: 2, result: func(t []schemas.Type) (schemas.Type, string) {
		if _, bad := sameAs(tAny, isNumber)(t); bad != "" {
			return tAny, bad
		}
		return numeric(t[0], t[1]), ""
	}, call: func(a []any) (any, error) {
		x, xi := a[0].(int64)
		y, yi := a[1].(int64)
		if xi && yi {
			if y == 0 {
				return nil, fmt.Errorf("division by zero")
			}
			return x % y, nil
		}
		if toFloat(a[1]) == 0 {
			return nil, fmt.Errorf("division by zero")
		}
		return math.Mod(toFloat(a[0]), toFloat(a[1])), nil
	}},
	"sqrt":  floatFn(math.Sqrt),
	"exp":   floatFn(math.Exp),
	"ln":    floatFn(math.Log),
	"log10": floatFn(math.Log10),
	"sign": {min: 1, max: 1, result: sameAs(tAny, isNumber), call: func(a []any) (any, error) {
		if i, ok := a[0].(int64); ok {
			return int64(cmp.Compare(i, 0)), nil
		}
		return float64(cmp.Compare(toFloat(a[0]), 0)), nil
	}},
}

func isInt(t schemas.Type) bool { return t.Kind == schemas.Int64 }

// aliases are other names of the functions, Calcite's and its libraries'.
var aliases = map[string]string{
	"character_length": "char_length", "length": "char_length", "len": "char_length",
	"substr": "substring", "ceiling": "ceil", "pow": "power", "strpos": "position", "locate": "position",
}

// substring is SUBSTRING(s FROM start [FOR length]), 1-based.
func substring(a []any) (any, error) {
	r := []rune(str(a[0]))
	start := a[1].(int64)
	if start < 0 { // from the end, as Calcite's SUBSTR
		start = max(int64(len(r))+start+1, 1)
	}
	start = max(start, 1)
	end := int64(len(r)) + 1
	if len(a) > 2 {
		n := a[2].(int64)
		if n < 0 {
			return nil, fmt.Errorf("negative substring length %d", n)
		}
		end = min(start+n, end)
	}
	if start > int64(len(r)) || end <= start {
		return "", nil
	}
	return string(r[start-1 : end-1]), nil
}

// call compiles a function call: the scalar functions, and the forms of Calcite's syntax the
// rewriting gave a name (CAST, INTERVAL) or TiDB's parser names (TRIM, EXTRACT,
// CURRENT_TIMESTAMP, COALESCE).
func (c *compiler) call(e *ast.FuncCallExpr) (node, bool) {
	name := fnName(e)
	switch name {
	case castFn:
		return c.cast(e)
	case intervalFn:
		return c.interval(e)
	case "current_timestamp", "now", "localtimestamp":
		now := c.now
		return node{typ: tTime, eval: func(schemas.Row) (any, error) { return now().UTC(), nil }}, true
	case "current_date", "curdate":
		now := c.now // a TIMESTAMP at the day's midnight: sluice's SQL has no DATE type
		return node{typ: tTime, eval: func(schemas.Row) (any, error) { return now().UTC().Truncate(24 * time.Hour), nil }}, true
	case "trim":
		return c.trim(e)
	case "extract":
		return c.extract(e)
	case "coalesce", "ifnull", "nvl":
		return c.coalesce(e)
	case "nullif":
		return c.nullif(e)
	case "if":
		return c.ifFn(e)
	case "tumble", "hop", "session":
		c.errorf(e, "%s is a window of GROUP BY", strings.ToUpper(name)).
			Detail = "write GROUP BY " + strings.ToUpper(name) + "(ts, INTERVAL '1' MINUTE) in the Sql transform; select its bounds with " + strings.ToUpper(name) + "_START and _END"
		return node{}, false
	}
	if strings.HasSuffix(name, "_start") || strings.HasSuffix(name, "_end") {
		if w := strings.TrimSuffix(strings.TrimSuffix(name, "_start"), "_end"); w == "tumble" || w == "hop" || w == "session" {
			c.errorf(e, "%s needs GROUP BY %s(...) in the same query", strings.ToUpper(name), strings.ToUpper(w))
			return node{}, false
		}
	}
	if a, ok := aliases[name]; ok {
		name = a
	}
	f, known := functions[name]
	if !known {
		names := make([]string, 0, len(functions))
		for n := range functions {
			names = append(names, strings.ToUpper(n))
		}
		c.errorf(e, "unknown function %s%s", strings.ToUpper(e.FnName.O), diag.DidYouMean(strings.ToUpper(e.FnName.O), names))
		return node{}, false
	}
	args, ok := c.args(e.Args)
	if !ok {
		return node{}, false
	}
	if len(args) < f.min || f.max >= 0 && len(args) > f.max {
		c.errorf(e, "%s takes %s, not %d", strings.ToUpper(e.FnName.O), arity(f.min, f.max), len(args))
		return node{}, false
	}
	types := make([]schemas.Type, len(args))
	null := false
	for i, a := range args {
		types[i] = a.typ
		null = null || a.null
	}
	t, bad := f.result(types)
	if bad != "" {
		c.errorf(e, "%s: %s", strings.ToUpper(e.FnName.O), bad).Detail = "CAST the argument to the type the function takes"
		return node{}, false
	}
	return node{typ: t, null: null || name == "substring", eval: func(row schemas.Row) (any, error) {
		vals := make([]any, len(args))
		for i, a := range args {
			v, err := a.eval(row)
			if v == nil || err != nil {
				return nil, err
			}
			vals[i] = v
		}
		v, err := f.call(vals)
		if err != nil {
			return nil, c.rowError(e, "%s: %v", strings.ToUpper(e.FnName.O), err)
		}
		return v, nil
	}}, true
}

func arity(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %d arguments", lo)
	case lo == hi && lo == 1:
		return "1 argument"
	case lo == hi:
		return fmt.Sprintf("%d arguments", lo)
	}
	return fmt.Sprintf("%d to %d arguments", lo, hi)
}

func (c *compiler) args(list []ast.ExprNode) ([]node, bool) {
	ok := true
	out := make([]node, len(list))
	for i, a := range list {
		var good bool
		out[i], good = c.expr(a)
		ok = ok && good
	}
	return out, ok
}

// stringArg is the text of a literal argument the rewriting wrote.
func stringArg(e ast.ExprNode) string {
	if v, ok := e.(*test_driver.ValueExpr); ok {
		return fmt.Sprint(v.GetValue())
	}
	return ""
}

// castTypes are the type names CAST takes, Calcite's and their common synonyms.
var castTypes = map[string]schemas.Type{
	"VARCHAR": tString, "CHAR": tString, "STRING": tString, "CHARACTER": tString, "CHARACTER VARYING": tString, "TEXT": tString,
	"BIGINT": tInt, "INTEGER": tInt, "INT": tInt, "SMALLINT": tInt, "TINYINT": tInt, "INT64": tInt, "SIGNED": tInt,
	"DOUBLE": tFloat, "DOUBLE PRECISION": tFloat, "FLOAT": tFloat, "REAL": tFloat, "DECIMAL": tFloat, "NUMERIC": tFloat, "FLOAT64": tFloat,
	"BOOLEAN": tBool, "BOOL": tBool,
	"TIMESTAMP": tTime,
}

// castName returns the type name without a length or precision: VARCHAR(10) -> VARCHAR.
func castName(s string) string {
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

func (c *compiler) cast(e *ast.FuncCallExpr) (node, bool) {
	if len(e.Args) != 2 {
		c.errorf(e, "CAST takes (value AS type)")
		return node{}, false
	}
	x, ok := c.expr(e.Args[0])
	name := castName(stringArg(e.Args[1]))
	t, known := castTypes[name]
	if !known {
		names := make([]string, 0, len(castTypes))
		for n := range castTypes {
			names = append(names, n)
		}
		c.errorf(e.Args[1], "CAST to %s is not supported%s", name, diag.DidYouMean(name, names)).
			Detail = "sluice casts to VARCHAR, BIGINT, DOUBLE, BOOLEAN and TIMESTAMP"
		return node{}, false
	}
	if !ok {
		return node{}, false
	}
	return node{typ: t, null: x.null, eval: func(row schemas.Row) (any, error) {
		v, err := x.eval(row)
		if v == nil || err != nil {
			return nil, err
		}
		out, err := castValue(v, t.Kind)
		if err != nil {
			return nil, c.rowError(e, "cannot CAST %s AS %s", schemas.Describe(v), name)
		}
		return out, nil
	}}, true
}

// castValue converts a non-null value to kind k as CAST does.
func castValue(v any, k schemas.Kind) (any, error) {
	switch k {
	case schemas.String:
		switch v := v.(type) {
		case string:
			return v, nil
		case float64:
			return strconv.FormatFloat(v, 'G', -1, 64), nil
		case bool:
			return strings.ToUpper(strconv.FormatBool(v)), nil
		case time.Time:
			return v.UTC().Format("2006-01-02 15:04:05"), nil
		}
		return fmt.Sprint(v), nil
	case schemas.Int64:
		switch v := v.(type) {
		case int64:
			return v, nil
		case float64:
			return int64(v), nil // Calcite truncates toward zero
		case string:
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		case bool:
			return b2i(v), nil
		}
	case schemas.Float64:
		switch v := v.(type) {
		case int64:
			return float64(v), nil
		case float64:
			return v, nil
		case string:
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	case schemas.Bool:
		switch v := v.(type) {
		case bool:
			return v, nil
		case string:
			return strconv.ParseBool(strings.ToLower(strings.TrimSpace(v)))
		}
	case schemas.Timestamp:
		switch v := v.(type) {
		case time.Time:
			return v, nil
		case string:
			for _, layout := range []string{"2006-01-02 15:04:05", time.RFC3339Nano, "2006-01-02"} {
				if t, err := time.Parse(layout, strings.TrimSpace(v)); err == nil {
					return t.UTC(), nil
				}
			}
			return nil, fmt.Errorf("not a timestamp (YYYY-MM-DD HH:MM:SS)")
		}
	}
	return nil, fmt.Errorf("cannot cast %s", schemas.Describe(v))
}

// intervalUnits are the units of INTERVAL literals.
var intervalUnits = map[string]time.Duration{
	"SECOND": time.Second, "SECONDS": time.Second, "MINUTE": time.Minute, "MINUTES": time.Minute,
	"HOUR": time.Hour, "HOURS": time.Hour, "DAY": 24 * time.Hour, "DAYS": 24 * time.Hour,
	"MILLISECOND": time.Millisecond, "MILLISECONDS": time.Millisecond,
}

// monthUnits are the units of INTERVAL literals in calendar months.
var monthUnits = map[string]months{"MONTH": 1, "MONTHS": 1, "YEAR": 12, "YEARS": 12}

func (c *compiler) interval(e *ast.FuncCallExpr) (node, bool) {
	unit := stringArg(e.Args[1])
	d, known := intervalUnits[unit]
	perMonths, calendar := monthUnits[unit]
	if !known && !calendar {
		c.errorf(e, "INTERVAL %s is not supported: sluice takes SECOND, MINUTE, HOUR, DAY, MILLISECOND, MONTH and YEAR", unit)
		return node{}, false
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(stringArg(e.Args[0])), 64)
	if err != nil || n <= 0 || calendar && n != math.Trunc(n) {
		c.errorf(e, "INTERVAL needs a positive number (whole for MONTH and YEAR), not %s", stringArg(e.Args[0]))
		return node{}, false
	}
	var v any = time.Duration(n * float64(d))
	if calendar {
		v = months(n) * perMonths
	}
	return node{typ: tInt, interval: true, eval: func(schemas.Row) (any, error) { return v, nil }}, true
}

func (c *compiler) trim(e *ast.FuncCallExpr) (node, bool) {
	args, ok := c.args(e.Args[:min(len(e.Args), 2)])
	if !ok {
		return node{}, false
	}
	for i, a := range args {
		if a.typ.Kind != schemas.String && a.typ.Kind != schemas.Any {
			c.errorf(e.Args[i], "TRIM needs VARCHAR, but %s is %s", restore(e.Args[i]), sqlName(a.typ))
			return node{}, false
		}
	}
	dir := ast.TrimBothDefault
	if len(e.Args) == 3 {
		if d, ok := e.Args[2].(*ast.TrimDirectionExpr); ok {
			dir = d.Direction
		}
	}
	return node{typ: tString, null: args[0].null, eval: func(row schemas.Row) (any, error) {
		s, err := args[0].eval(row)
		if s == nil || err != nil {
			return nil, err
		}
		cut := " "
		if len(args) > 1 {
			v, err := args[1].eval(row)
			if v == nil || err != nil {
				return nil, err
			}
			cut = v.(string)
		}
		text := s.(string)
		if cut == "" {
			return text, nil
		}
		if dir != ast.TrimTrailing {
			for strings.HasPrefix(text, cut) {
				text = text[len(cut):]
			}
		}
		if dir != ast.TrimLeading {
			for strings.HasSuffix(text, cut) {
				text = text[:len(text)-len(cut)]
			}
		}
		return text, nil
	}}, true
}

func (c *compiler) extract(e *ast.FuncCallExpr) (node, bool) {
	unit, _ := e.Args[0].(*ast.TimeUnitExpr)
	x, ok := c.expr(e.Args[1])
	if !ok || unit == nil {
		return node{}, false
	}
	if x.typ.Kind != schemas.Timestamp && x.typ.Kind != schemas.Date && x.typ.Kind != schemas.Any {
		c.errorf(e.Args[1], "EXTRACT needs a TIMESTAMP, but %s is %s", restore(e.Args[1]), sqlName(x.typ))
		return node{}, false
	}
	var part func(t time.Time) int64
	switch unit.Unit {
	case ast.TimeUnitYear:
		part = func(t time.Time) int64 { return int64(t.Year()) }
	case ast.TimeUnitQuarter:
		part = func(t time.Time) int64 { return int64(t.Month()-1)/3 + 1 }
	case ast.TimeUnitMonth:
		part = func(t time.Time) int64 { return int64(t.Month()) }
	case ast.TimeUnitWeek:
		part = func(t time.Time) int64 { _, w := t.ISOWeek(); return int64(w) }
	case ast.TimeUnitDay:
		part = func(t time.Time) int64 { return int64(t.Day()) }
	case ast.TimeUnitHour:
		part = func(t time.Time) int64 { return int64(t.Hour()) }
	case ast.TimeUnitMinute:
		part = func(t time.Time) int64 { return int64(t.Minute()) }
	case ast.TimeUnitSecond:
		part = func(t time.Time) int64 { return int64(t.Second()) }
	default:
		c.errorf(e.Args[0], "EXTRACT(%s ...) is not supported: sluice extracts YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE and SECOND", unit.Unit)
		return node{}, false
	}
	return node{typ: tInt, null: x.null, eval: func(row schemas.Row) (any, error) {
		v, err := x.eval(row)
		t, isTime := v.(time.Time)
		if !isTime || err != nil {
			return nil, err
		}
		return part(t.UTC()), nil
	}}, true
}

func (c *compiler) coalesce(e *ast.FuncCallExpr) (node, bool) {
	args, ok := c.args(e.Args)
	if !ok || len(args) == 0 {
		return node{}, false
	}
	t, null := tAny, true
	for i, a := range args {
		var same bool
		if t, same = unify(t, a.typ); !same {
			c.errorf(e.Args[i], "%s: the arguments have different types: %s and %s", strings.ToUpper(e.FnName.O), sqlName(t), sqlName(a.typ))
			return node{}, false
		}
		null = null && a.null
	}
	return node{typ: t, null: null, eval: func(row schemas.Row) (any, error) {
		for _, a := range args {
			v, err := a.eval(row)
			if v != nil || err != nil {
				return widen(t, v), err
			}
		}
		return nil, nil
	}}, true
}

// ifFn is IF(condition, then, else), of Calcite's MySQL and BigQuery libraries: CASE WHEN
// condition THEN then ELSE else END.
func (c *compiler) ifFn(e *ast.FuncCallExpr) (node, bool) {
	if len(e.Args) != 3 {
		c.errorf(e, "IF takes 3 arguments: the condition, the value when it is TRUE, and otherwise")
		return node{}, false
	}
	return c.caseExpr(&ast.CaseExpr{WhenClauses: []*ast.WhenClause{{Expr: e.Args[0], Result: e.Args[1]}}, ElseClause: e.Args[2]})
}

func (c *compiler) nullif(e *ast.FuncCallExpr) (node, bool) {
	args, ok := c.args(e.Args)
	if !ok || len(args) != 2 {
		if ok {
			c.errorf(e, "NULLIF takes 2 arguments")
		}
		return node{}, false
	}
	return node{typ: args[0].typ, null: true, eval: func(row schemas.Row) (any, error) {
		a, err := args[0].eval(row)
		if a == nil || err != nil {
			return nil, err
		}
		b, err := args[1].eval(row)
		if err != nil {
			return nil, err
		}
		if b != nil {
			if d, err := compareValues(a, b); err == nil && d == 0 {
				return nil, nil
			}
		}
		return a, nil
	}}, true
}

func (c *compiler) like(e *ast.PatternLikeOrIlikeExpr) (node, bool) {
	x, ok1 := c.expr(e.Expr)
	p, ok2 := c.expr(e.Pattern)
	if !ok1 || !ok2 {
		return node{}, false
	}
	for _, a := range []struct {
		n node
		e ast.ExprNode
	}{{x, e.Expr}, {p, e.Pattern}} {
		if a.n.typ.Kind != schemas.String && a.n.typ.Kind != schemas.Any {
			c.errorf(a.e, "LIKE needs VARCHAR, but %s is %s", restore(a.e), sqlName(a.n.typ))
			return node{}, false
		}
	}
	not, fold, esc := e.Not, !e.IsLike, e.Escape
	var cached *regexp.Regexp
	if v, isLit := e.Pattern.(*test_driver.ValueExpr); isLit {
		cached = likeRegexp(fmt.Sprint(v.GetValue()), esc, fold)
	}
	return node{typ: tBool, null: x.null || p.null, eval: func(row schemas.Row) (any, error) {
		s, err := x.eval(row)
		if s == nil || err != nil {
			return nil, err
		}
		re := cached
		if re == nil {
			pat, err := p.eval(row)
			if pat == nil || err != nil {
				return nil, err
			}
			re = likeRegexp(pat.(string), esc, fold)
		}
		return re.MatchString(s.(string)) != not, nil
	}}, true
}

// likeRegexp translates a LIKE pattern (% any text, _ one character) to a regexp.
func likeRegexp(pat string, esc byte, fold bool) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("(?s)^")
	if fold {
		b.WriteString("(?i)")
	}
	for i := 0; i < len(pat); {
		r, n := utf8.DecodeRuneInString(pat[i:])
		switch {
		case esc != 0 && pat[i] == esc && i+1 < len(pat):
			r2, n2 := utf8.DecodeRuneInString(pat[i+1:])
			b.WriteString(regexp.QuoteMeta(string(r2)))
			i += 1 + n2
			continue
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
		i += n
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}
