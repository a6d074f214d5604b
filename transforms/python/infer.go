package python

import (
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"go.starlark.net/syntax"
)

// Static types of results. Starlark is dynamic; the schema of a transform's output is not:
// infer answers what it can see (literals, fields, operators, the builtins and string
// methods whose result type is fixed) and Any otherwise, checked per row. output_type
// overrides it.

// ty is an inferred type: known says whether t means anything; null that the value may be
// None.
type ty struct {
	t     schemas.Type
	known bool
	null  bool
	none  bool // None itself
}

var (
	unknown = ty{null: true}
	tInt    = known(schemas.Int64)
	tFloat  = known(schemas.Float64)
	tStr    = known(schemas.String)
	tBool   = known(schemas.Bool)
	tNone   = ty{null: true, none: true}
)

func known(k schemas.Kind) ty { return ty{t: schemas.Type{Kind: k}, known: true} }

func arrayOf(e ty) ty {
	t := schemas.Type{Kind: schemas.Array}
	if e.known {
		et := e.t
		t.Elem = &et
	}
	return ty{t: t, known: true}
}

// typer infers types in one function, with the names it can see: the fields of an
// expression, the row of a callable, and locals assigned in a def.
type typer struct {
	fields map[string]ty // expression parameters
	row    string        // the callable's row parameter
	in     *schemas.Schema
	locals map[string]ty
}

// infer returns the schema type and nullability of what the function returns.
func (c *compilation) infer(f *syntax.File, fn *fnNode) (schemas.Type, bool) {
	tp := &typer{in: c.in, locals: map[string]ty{}}
	if c.src.Kind == expr.KindExpression {
		tp.fields = map[string]ty{}
		for _, fl := range c.in.Fields {
			tp.fields[fl.Name] = fieldTy(fl)
		}
	} else if len(fn.params) > 0 {
		if id, ok := fn.params[0].(*syntax.Ident); ok {
			tp.row = id.Name
		}
	}
	var res ty
	if fn.result != nil {
		res = tp.expr(fn.result)
	} else {
		res = tp.body(fn.body)
	}
	if !res.known {
		return schemas.Type{Kind: schemas.Any}, true
	}
	return res.t, res.null
}

func fieldTy(f schemas.Field) ty {
	t := f.Type
	switch t.Kind {
	case schemas.Decimal:
		t = schemas.Type{Kind: schemas.Float64}
	case schemas.Any:
		return unknown
	}
	return ty{t: t, known: true, null: f.Nullable}
}

// body infers the result of a def: the union of its returns (None when it can fall off the
// end). Locals assigned a single type are known.
func (tp *typer) body(stmts []syntax.Stmt) ty {
	for range 2 { // twice, so that a local assigned from another local is known
		for _, s := range stmts {
			syntax.Walk(s, func(n syntax.Node) bool {
				switch a := n.(type) {
				case *syntax.AssignStmt:
					if id, ok := a.LHS.(*syntax.Ident); ok {
						v := tp.expr(a.RHS)
						if a.Op != syntax.EQ {
							v = unknown
							if prev, seen := tp.locals[id.Name]; seen {
								v = tp.binary(a.Op-syntax.PLUS_EQ+syntax.PLUS, prev, tp.expr(a.RHS))
							}
						}
						if prev, seen := tp.locals[id.Name]; seen {
							v = unify(prev, v)
						}
						tp.locals[id.Name] = v
					}
				case *syntax.ForStmt:
					tp.bindUnknown(a.Vars)
				case *syntax.DefStmt, *syntax.LambdaExpr:
					return false
				}
				return true
			})
		}
	}
	var res *ty
	for _, s := range stmts {
		syntax.Walk(s, func(n syntax.Node) bool {
			switch r := n.(type) {
			case *syntax.ReturnStmt:
				v := tNone
				if r.Result != nil {
					v = tp.expr(r.Result)
				}
				if res == nil {
					res = &v
				} else {
					u := unify(*res, v)
					res = &u
				}
			case *syntax.DefStmt, *syntax.LambdaExpr:
				return false
			}
			return true
		})
	}
	if res == nil {
		return tNone
	}
	if !endsInReturn(stmts) {
		res.null = true
	}
	return *res
}

func (tp *typer) bindUnknown(e syntax.Expr) {
	switch v := e.(type) {
	case *syntax.Ident:
		tp.locals[v.Name] = unknown
	case *syntax.TupleExpr:
		for _, x := range v.List {
			tp.bindUnknown(x)
		}
	case *syntax.ParenExpr:
		tp.bindUnknown(v.X)
	}
}

// endsInReturn reports whether control cannot fall off the end of stmts.
func endsInReturn(stmts []syntax.Stmt) bool {
	if len(stmts) == 0 {
		return false
	}
	switch s := stmts[len(stmts)-1].(type) {
	case *syntax.ReturnStmt:
		return true
	case *syntax.IfStmt:
		return endsInReturn(s.True) && endsInReturn(s.False)
	case *syntax.ExprStmt:
		call, ok := s.X.(*syntax.CallExpr)
		if id, isID := call.Fn.(*syntax.Ident); ok && isID && id.Name == "fail" {
			return true
		}
	}
	return false
}

// unify is the type of a value that is a or b.
func unify(a, b ty) ty {
	null := a.null || b.null
	switch {
	case a.none:
		return ty{t: b.t, known: b.known, null: true, none: b.none}
	case b.none:
		return ty{t: a.t, known: a.known, null: true}
	case !a.known || !b.known:
		return unknown
	case a.t.Equal(b.t):
		return ty{t: a.t, known: true, null: null}
	case numeric(a) && numeric(b):
		return ty{t: schemas.Type{Kind: schemas.Float64}, known: true, null: null}
	}
	return unknown
}

func numeric(t ty) bool {
	return t.known && (t.t.Kind == schemas.Int64 || t.t.Kind == schemas.Float64)
}

func (tp *typer) expr(e syntax.Expr) ty {
	switch x := e.(type) {
	case *syntax.ParenExpr:
		return tp.expr(x.X)
	case *syntax.Literal:
		switch x.Token {
		case syntax.INT:
			return tInt
		case syntax.FLOAT:
			return tFloat
		case syntax.STRING:
			return tStr
		case syntax.BYTES:
			return known(schemas.Bytes)
		}
	case *syntax.Ident:
		return tp.ident(x.Name)
	case *syntax.DotExpr:
		return tp.dot(x)
	case *syntax.UnaryExpr:
		if x.Op == syntax.NOT {
			return tBool
		}
		if x.X != nil {
			return tp.expr(x.X)
		}
	case *syntax.BinaryExpr:
		return tp.binary(x.Op, tp.expr(x.X), tp.expr(x.Y))
	case *syntax.CondExpr:
		return unify(tp.expr(x.True), tp.expr(x.False))
	case *syntax.CallExpr:
		return tp.call(x)
	case *syntax.ListExpr:
		return tp.list(x.List)
	case *syntax.TupleExpr:
		return tp.list(x.List)
	case *syntax.Comprehension:
		if x.Curly {
			return ty{t: schemas.Type{Kind: schemas.Map}, known: true}
		}
		return arrayOf(unknown)
	case *syntax.DictExpr:
		return ty{t: schemas.Type{Kind: schemas.Map}, known: true}
	case *syntax.IndexExpr:
		c := tp.expr(x.X)
		switch {
		case c.known && c.t.Kind == schemas.String:
			return tStr
		case c.known && (c.t.Kind == schemas.Array || c.t.Kind == schemas.Map) && c.t.Elem != nil:
			return ty{t: *c.t.Elem, known: true, null: true}
		}
	case *syntax.SliceExpr:
		c := tp.expr(x.X)
		if c.known && (c.t.Kind == schemas.String || c.t.Kind == schemas.Array) {
			return ty{t: c.t, known: true}
		}
	}
	return unknown
}

func (tp *typer) list(items []syntax.Expr) ty {
	if len(items) == 0 {
		return arrayOf(unknown)
	}
	e := tp.expr(items[0])
	for _, it := range items[1:] {
		e = unify(e, tp.expr(it))
	}
	if e.null {
		return arrayOf(unknown)
	}
	return arrayOf(e)
}

func (tp *typer) ident(name string) ty {
	switch name {
	case "True", "False":
		return tBool
	case "None":
		return tNone
	}
	if t, ok := tp.locals[name]; ok {
		return t
	}
	if t, ok := tp.fields[name]; ok {
		return t
	}
	return unknown
}

// dot types row.a.b from the schema.
func (tp *typer) dot(d *syntax.DotExpr) ty {
	var path []string
	var x syntax.Expr = d
	for {
		dot, ok := x.(*syntax.DotExpr)
		if !ok {
			break
		}
		path = append([]string{dot.Name.Name}, path...)
		x = dot.X
	}
	id, ok := x.(*syntax.Ident)
	if !ok || tp.row == "" || id.Name != tp.row {
		return unknown
	}
	fields := tp.in.Fields
	var t ty
	for _, name := range path {
		f, ok := findField(fields, name)
		if !ok {
			return unknown
		}
		t = fieldTy(f)
		fields = f.Type.Fields
	}
	return t
}

func (tp *typer) binary(op syntax.Token, a, b ty) ty {
	switch op {
	case syntax.EQL, syntax.NEQ, syntax.LT, syntax.GT, syntax.LE, syntax.GE, syntax.IN, syntax.NOT_IN:
		return tBool
	case syntax.AND, syntax.OR:
		if a.known && b.known && a.t.Kind == schemas.Bool && b.t.Kind == schemas.Bool {
			return tBool
		}
		return unknown
	}
	null := false // arithmetic on None fails the row rather than yielding None
	switch {
	case op == syntax.PERCENT && a.known && a.t.Kind == schemas.String:
		return tStr
	case op == syntax.SLASH && numeric(a) && numeric(b):
		return tFloat
	case numeric(a) && numeric(b) && op != syntax.PIPE && op != syntax.AMP:
		if a.t.Kind == schemas.Int64 && b.t.Kind == schemas.Int64 {
			return ty{t: a.t, known: true, null: null}
		}
		return tFloat
	case op == syntax.PLUS && a.known && b.known && a.t.Kind == b.t.Kind && (a.t.Kind == schemas.String || a.t.Kind == schemas.Array):
		return ty{t: a.t, known: true}
	case op == syntax.STAR && a.known && a.t.Kind == schemas.String:
		return tStr
	case a.known && a.t.Kind == schemas.Timestamp && b.known && b.t.Kind == schemas.Timestamp && op == syntax.MINUS:
		return tFloat
	case a.known && a.t.Kind == schemas.Timestamp && (op == syntax.PLUS || op == syntax.MINUS):
		return ty{t: a.t, known: true}
	}
	return unknown
}

// callTypes are the results of the builtins and methods whose type is fixed.
var callTypes = map[string]ty{
	"str": tStr, "repr": tStr, "format": tStr, "_py_format": tStr, "chr": tStr, "hex": tStr,
	"int": tInt, "len": tInt, "ord": tInt, "hash": tInt,
	"float": tFloat,
	"bool":  tBool, "isinstance": tBool, "any": tBool, "all": tBool, "hasattr": tBool,
	// string methods
	"upper": tStr, "lower": tStr, "strip": tStr, "lstrip": tStr, "rstrip": tStr, "replace": tStr,
	"title": tStr, "capitalize": tStr, "join": tStr, "removeprefix": tStr, "removesuffix": tStr,
	"startswith": tBool, "endswith": tBool, "isdigit": tBool, "isalpha": tBool, "isalnum": tBool,
	"isspace": tBool, "islower": tBool, "isupper": tBool, "istitle": tBool,
	"find": tInt, "rfind": tInt, "index": tInt, "rindex": tInt, "count": tInt,
	"split": arrayOf(tStr), "rsplit": arrayOf(tStr), "splitlines": arrayOf(tStr),
	"strftime": tStr, "isoformat": tStr, "to_rfc3339": tStr, "seconds": tFloat, "timestamp": tFloat,
}

// moduleCalls are the results of module functions, by module and function.
var moduleCalls = map[string]ty{
	"re.sub": tStr, "re.findall": arrayOf(unknown), "re.split": arrayOf(tStr), "re.escape": tStr,
	"json.dumps": tStr, "math.floor": tInt, "math.ceil": tInt, "math.trunc": tInt,
	"math.isnan": tBool, "math.isinf": tBool, "time.time": tFloat, "time.strftime": tStr,
	"datetime.strptime": known(schemas.Timestamp), "datetime.fromtimestamp": known(schemas.Timestamp),
	"datetime.datetime": known(schemas.Timestamp),
}

func (tp *typer) call(x *syntax.CallExpr) ty {
	switch fn := x.Fn.(type) {
	case *syntax.Ident:
		if _, local := tp.locals[fn.Name]; local {
			return unknown
		}
		switch fn.Name {
		case "abs":
			if len(x.Args) == 1 {
				if a := tp.expr(x.Args[0]); numeric(a) {
					return ty{t: a.t, known: true}
				}
			}
			return unknown
		case "round":
			if len(x.Args) == 1 {
				return tInt
			}
			return tFloat
		case "sorted", "list":
			return arrayOf(unknown)
		case "min", "max", "sum":
			if len(x.Args) > 1 && fn.Name != "sum" {
				return unify(tp.expr(x.Args[0]), tp.expr(x.Args[1]))
			}
			return unknown
		}
		if t, ok := callTypes[fn.Name]; ok && isBuiltinName(fn.Name) {
			return t
		}
	case *syntax.DotExpr:
		if mod, ok := fn.X.(*syntax.Ident); ok {
			if t, ok := moduleCalls[mod.Name+"."+fn.Name.Name]; ok {
				return t
			}
			if mod.Name == "math" {
				return tFloat
			}
		}
		if d, ok := fn.X.(*syntax.DotExpr); ok {
			if mod, ok := d.X.(*syntax.Ident); ok {
				if t, ok := moduleCalls[mod.Name+"."+d.Name.Name+"."+fn.Name.Name]; ok {
					return t
				}
				if mod.Name == "datetime" && d.Name.Name == "datetime" {
					return known(schemas.Timestamp)
				}
			}
		}
		if t, ok := callTypes[fn.Name.Name]; ok && !isBuiltinName(fn.Name.Name) || fn.Name.Name == "format" {
			if fn.Name.Name == "format" {
				return tStr
			}
			return t
		}
	}
	return unknown
}

// isBuiltinName tells the builtin functions of callTypes from its methods.
func isBuiltinName(name string) bool {
	switch name {
	case "str", "repr", "format", "_py_format", "chr", "hex", "int", "len", "ord", "hash", "float", "bool",
		"isinstance", "any", "all", "hasattr":
		return true
	}
	return false
}
