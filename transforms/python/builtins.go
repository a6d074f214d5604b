package python

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"go.starlark.net/lib/json"
	starmath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"
)

// modules are the Python modules sluice provides natively, by import name.
var modules = map[string]func() starlark.Value{
	"re":       reModule,
	"json":     jsonModule,
	"math":     mathModule,
	"datetime": datetimeModule,
	"time":     timeModule,
	// Beam's Row, for callables that build rows; typing, for the imports of annotations.
	"apache_beam": beamModule,
	"typing":      func() starlark.Value { return anyAttrs{"typing"} },
}

func moduleNames() []string {
	names := make([]string, 0, len(modules))
	for n := range modules {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// builtins are Python's builtins Starlark lacks.
var builtins = starlark.StringDict{
	"sum":        starlark.NewBuiltin("sum", sum),
	"round":      starlark.NewBuiltin("round", round),
	"format":     starlark.NewBuiltin("format", format),
	"isinstance": starlark.NewBuiltin("isinstance", isinstance),
	"map":        starlark.NewBuiltin("map", mapFn),
	"filter":     starlark.NewBuiltin("filter", filterFn),
	"pow":        starlark.NewBuiltin("pow", pow),
	"divmod":     starlark.NewBuiltin("divmod", divmod),
	"_py_format": starlark.NewBuiltin("format", pyFormat),
	"str":        starlark.NewBuiltin("str", pyStr),
	"repr":       starlark.NewBuiltin("repr", pyReprBuiltin),
}

// predeclared returns the names the code sees besides Starlark's universe: the builtins
// above and what its import lines bind; unknown modules are reported at their line.
func (c *compilation) predeclared() starlark.StringDict {
	d := make(starlark.StringDict, len(builtins)+len(c.rw.imports))
	for k, v := range builtins {
		d[k] = v
	}
	for _, imp := range c.rw.imports {
		root, _, _ := strings.Cut(imp.module, ".")
		mk, ok := modules[root]
		if !ok {
			c.errorAt(imp.offset, fmt.Sprintf("ModuleNotFoundError: no module named %q: sluice's Python provides %s", imp.module, strings.Join(moduleNames(), ", ")), "")
			continue
		}
		v := mk()
		for _, part := range strings.Split(imp.module, ".")[1:] {
			v = member(v, part)
		}
		if imp.member != "" {
			v = member(v, imp.member)
		}
		if v == nil {
			c.errorAt(imp.memberOffset, fmt.Sprintf("ImportError: cannot import name %q from %q", imp.member, imp.module), "")
			continue
		}
		d[imp.name] = v
	}
	return d
}

func member(v starlark.Value, name string) starlark.Value {
	if v == nil {
		return nil
	}
	a, ok := v.(starlark.HasAttrs)
	if !ok {
		return nil
	}
	m, _ := a.Attr(name)
	return m
}

// beamModule is the part of apache_beam a callable can use: Row(name=value, ...), a dict
// that becomes a struct (give output_type) or a map.
func beamModule() starlark.Value {
	return &starlarkstruct.Module{Name: "apache_beam", Members: starlark.StringDict{
		"Row": starlark.NewBuiltin("Row", func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			if len(args) > 0 {
				return nil, fmt.Errorf("TypeError: Row takes keyword arguments only")
			}
			d := starlark.NewDict(len(kw))
			for _, kv := range kw {
				_ = d.SetKey(kv[0], kv[1])
			}
			return d, nil
		}),
	}}
}

// anyAttrs is a module every name of which exists (as None): typing, whose names only
// annotations use, and sluice blanks annotations out.
type anyAttrs struct{ name string }

func (m anyAttrs) String() string                      { return "<module " + m.name + ">" }
func (m anyAttrs) Type() string                        { return "module" }
func (m anyAttrs) Freeze()                             {}
func (m anyAttrs) Truth() starlark.Bool                { return true }
func (m anyAttrs) Hash() (uint32, error)               { return starlark.String(m.name).Hash() }
func (m anyAttrs) Attr(string) (starlark.Value, error) { return starlark.None, nil }
func (m anyAttrs) AttrNames() []string                 { return nil }

func mathModule() starlark.Value {
	m := make(starlark.StringDict, len(starmath.Module.Members)+8)
	for k, v := range starmath.Module.Members {
		m[k] = v
	}
	m["inf"] = starlark.Float(math.Inf(1))
	m["nan"] = starlark.Float(math.NaN())
	unary := func(name string, f func(float64) starlark.Value) *starlark.Builtin {
		return starlark.NewBuiltin("math."+name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
			var x starlark.Value
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 1, &x); err != nil {
				return nil, err
			}
			fx, ok := starlark.AsFloat(x)
			if !ok {
				return nil, fmt.Errorf("TypeError: must be real number, not %s", x.Type())
			}
			return f(fx), nil
		})
	}
	m["isnan"] = unary("isnan", func(x float64) starlark.Value { return starlark.Bool(math.IsNaN(x)) })
	m["isinf"] = unary("isinf", func(x float64) starlark.Value { return starlark.Bool(math.IsInf(x, 0)) })
	m["log10"] = unary("log10", func(x float64) starlark.Value { return starlark.Float(math.Log10(x)) })
	m["log2"] = unary("log2", func(x float64) starlark.Value { return starlark.Float(math.Log2(x)) })
	m["trunc"] = unary("trunc", func(x float64) starlark.Value { return starlark.MakeInt64(int64(math.Trunc(x))) })
	delete(m, "round") // Python's math has no round
	return &starlarkstruct.Module{Name: "math", Members: m}
}

func jsonModule() starlark.Value {
	return &starlarkstruct.Module{Name: "json", Members: starlark.StringDict{
		"loads": json.Module.Members["decode"],
		"dumps": starlark.NewBuiltin("json.dumps", dumps),
	}}
}

func sum(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var it starlark.Iterable
	var acc starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs(b.Name(), args, kw, "iterable", &it, "start?", &acc); err != nil {
		return nil, err
	}
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		var err error
		if acc, err = starlark.Binary(syntax.PLUS, acc, x); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// round is Python's: half to even, an int without ndigits.
func round(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var x, nd starlark.Value = nil, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kw, "number", &x, "ndigits?", &nd); err != nil {
		return nil, err
	}
	if i, ok := x.(starlark.Int); ok {
		return i, nil
	}
	f, ok := starlark.AsFloat(x)
	if !ok {
		return nil, fmt.Errorf("TypeError: type %s doesn't define __round__ method", x.Type())
	}
	if nd == starlark.None {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("ValueError: cannot convert float %v to integer", f)
		}
		return starlark.NumberToInt(starlark.Float(math.RoundToEven(f)))
	}
	n, err := starlark.AsInt32(nd)
	if err != nil {
		return nil, fmt.Errorf("TypeError: ndigits must be an integer")
	}
	if n < 0 {
		p := math.Pow(10, float64(-n))
		return starlark.Float(math.RoundToEven(f/p) * p), nil
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'f', n, 64), 64)
	return starlark.Float(r), nil
}

func pow(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 2, &x, &y); err != nil {
		return nil, err
	}
	xi, xInt := x.(starlark.Int)
	yi, yInt := y.(starlark.Int)
	if xInt && yInt && yi.Sign() >= 0 {
		n, _ := yi.Int64()
		acc := starlark.MakeInt(1)
		for range n {
			acc = acc.Mul(xi)
		}
		return acc, nil
	}
	fx, ok1 := starlark.AsFloat(x)
	fy, ok2 := starlark.AsFloat(y)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("TypeError: unsupported operand type(s) for pow(): %s, %s", x.Type(), y.Type())
	}
	return starlark.Float(math.Pow(fx, fy)), nil
}

func divmod(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 2, &x, &y); err != nil {
		return nil, err
	}
	q, err := starlark.Binary(syntax.SLASHSLASH, x, y)
	if err != nil {
		return nil, err
	}
	r, err := starlark.Binary(syntax.PERCENT, x, y)
	if err != nil {
		return nil, err
	}
	return starlark.Tuple{q, r}, nil
}

// isinstance answers for the builtin types, given as the functions that make them.
func isinstance(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	var x, types starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 2, &x, &types); err != nil {
		return nil, err
	}
	candidates := starlark.Tuple{types}
	if t, ok := types.(starlark.Tuple); ok {
		candidates = t
	}
	for _, t := range candidates {
		fn, ok := t.(*starlark.Builtin)
		if !ok {
			return nil, fmt.Errorf("TypeError: isinstance() arg 2 must be a type or tuple of types")
		}
		want, ok := typeNames[fn.Name()]
		if !ok {
			return nil, fmt.Errorf("TypeError: isinstance() does not know the type %s", fn.Name())
		}
		if strings.Contains(" "+want+" ", " "+x.Type()+" ") {
			return starlark.True, nil
		}
	}
	return starlark.False, nil
}

// typeNames are the Starlark type names each builtin type function stands for.
var typeNames = map[string]string{
	"str": "string", "int": "int bool", "float": "float", "bool": "bool", "list": "list", "dict": "dict",
	"tuple": "tuple", "bytes": "bytes", "set": "set",
}

func mapFn(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	return applyEach(thread, b, args, kw, false)
}

func filterFn(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
	return applyEach(thread, b, args, kw, true)
}

// applyEach is map (keep false) and filter (keep true), returning lists.
func applyEach(thread *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kw []starlark.Tuple, keep bool) (starlark.Value, error) {
	var fn starlark.Value
	var it starlark.Iterable
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kw, 2, &fn, &it); err != nil {
		return nil, err
	}
	var out []starlark.Value
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		v := x
		if fn != starlark.None {
			var err error
			if v, err = starlark.Call(thread, fn, starlark.Tuple{x}, nil); err != nil {
				return nil, err
			}
		}
		switch {
		case !keep:
			out = append(out, v)
		case bool(v.Truth()):
			out = append(out, x)
		}
	}
	return starlark.NewList(out), nil
}
