package combine

import (
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/transforms/expr"
	"gopkg.in/yaml.v3"
)

// Combine functions by the names Beam users write: sluice's short names, Beam's Python
// paths of the CombineFns whose meaning is an associative combine over a group's rows, and
// a Python function (a, b) -> value. Any other Python path is a config error that says
// what to use instead.

// combinersPath is the module of Beam's CombineFns.
const combinersPath = "apache_beam.transforms.combiners."

// beamCombiners are Beam's CombineFns sluice runs, by class name.
var beamCombiners = map[string]Fn{
	"CountCombineFn":      Count,
	"MeanCombineFn":       Mean,
	"ToListCombineFn":     Group,
	"ConcatListCombineFn": Concat,
	"TopCombineFn":        Top,
	"LatestCombineFn":     Latest,
	"SampleCombineFn":     Sample,
}

// aliases are other short names of the functions.
var aliases = map[string]Fn{"to_list": Group}

// lookupFn returns the function a name or Beam's Python path means.
func lookupFn(name string) (Fn, bool) {
	if f, ok := ParseFn(name); ok {
		return f, true
	}
	if f, ok := aliases[name]; ok {
		return f, true
	}
	if class, ok := strings.CutPrefix(name, combinersPath); ok {
		f, ok := beamCombiners[class]
		return f, ok
	}
	return 0, false
}

// fnsHint lists what fn can be, for the errors of an unknown one.
const fnsHint = "sluice's combine functions are sum, count, min, max, mean, all, any, group (to_list), concat, " +
	"top (config n, key, reverse), latest and sample (config n); Beam's " + combinersPath +
	"{CountCombineFn, MeanCombineFn, ToListCombineFn, ConcatListCombineFn, TopCombineFn, LatestCombineFn, SampleCombineFn}; " +
	"or, with language: python, a function (a, b) -> value that is associative"

// isPythonFunction reports whether fn's text is Python code (a lambda or a def) rather than a name.
func isPythonFunction(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "lambda") || strings.HasPrefix(s, "def ")
}

// fnConfig is the config of top and sample, as Beam's TopCombineFn(n, key, reverse) and
// SampleCombineFn(n) take it.
type fnConfig struct {
	N       int       `yaml:"n" doc:"How many values top and sample keep."`
	Key     yaml.Node `yaml:"key" doc:"top: a field or expression of the record to order by (default: the value)."`
	Reverse bool      `yaml:"reverse" doc:"top: keep the smallest values, smallest first."`
}

// fnChoice is a decoded fn: the function, where it was named, its config, and its text when
// it is a Python function.
type fnChoice struct {
	fn     Fn
	name   string
	at     *yaml.Node
	config *yaml.Node
}

// decodeFn reads fn as a name or {type: name, config}. The Python function's text is
// compiled once the values' type is known (configure).
func decodeFn(ctx *component.Context, fnNode *yaml.Node, dest string, lang string) (fnChoice, bool) {
	c := fnChoice{name: fnNode.Value, at: fnNode}
	switch fnNode.Kind {
	case yaml.MappingNode:
		var f fnForm
		if !ctx.Decode(fnNode, &f, "combine "+dest+" fn") {
			return c, false
		}
		c.name, c.at = f.Type, component.MappingValue(fnNode, "type")
		if f.Config.Kind != 0 {
			c.config = &f.Config
		}
	case yaml.ScalarNode:
	default:
		ctx.Errorf(ctx.At(fnNode), "fn must be a combine function name or {type: name}")
		return c, false
	}
	if isPythonFunction(c.name) {
		if !strings.EqualFold(lang, "python") {
			ctx.Errorf(ctx.At(c.at), "a Python function as fn needs language: python").
				Detail = "set language: python on the Combine; the function takes two values and returns their combination"
			return c, false
		}
		c.fn = Reduce
	} else {
		fn, known := lookupFn(c.name)
		if !known {
			unknownFn(ctx, c)
			return c, false
		}
		c.fn = fn
	}
	if c.config != nil && c.fn != Top && c.fn != Sample {
		ctx.Errorf(ctx.At(c.config), "combine function %s takes no config", c.name)
		return c, false
	}
	if c.config == nil && (c.fn == Top || c.fn == Sample) {
		ctx.Errorf(ctx.At(c.at), "combine function %s needs config: {n: how many values to keep}", c.name)
		return c, false
	}
	return c, true
}

// unknownFn reports a name that is no combine function: a Python path of a class sluice
// does not run, or a misspelt name.
func unknownFn(ctx *component.Context, c fnChoice) {
	if strings.Contains(c.name, ".") {
		ctx.Errorf(ctx.At(c.at), "combine function %s is not one sluice runs", c.name).Detail = fnsHint
		return
	}
	names := append(FnNames(), "to_list")
	ctx.Errorf(ctx.At(c.at), "unknown combine function %q%s", c.name, diag.DidYouMean(c.name, names)).Detail = fnsHint
}

// configure completes agg from the fn's config (top's n, key and reverse, sample's n) and
// compiles a Python function. It returns the program of top's key, if any.
func configure(ctx *component.Context, agg *Agg, c fnChoice, in *schemas.Schema, opts expr.Options) (*expr.Program, bool) {
	switch c.fn {
	case Reduce:
		var e component.Expr
		if !ctx.Decode(c.at, &e, "combine fn") {
			return nil, false
		}
		pair := pairSchema(agg.In)
		prog, err := expr.Spec{Expr: e, Kind: expr.KindReduce}.Compile(pair, opts)
		if err != nil {
			ctx.Diags.Append(e.Pos, err)
			return nil, false
		}
		agg.reduce = newReducer(pair, prog)
		return nil, true
	case Top, Sample:
	default:
		return nil, true
	}
	var fc fnConfig
	if !ctx.Decode(c.config, &fc, "combine function "+c.name+" config") {
		return nil, false
	}
	if fc.N < 1 {
		at := c.config
		if n := component.MappingValue(c.config, "n"); n != nil {
			at = n
		}
		ctx.Errorf(ctx.At(at), "combine function %s needs n, how many values to keep, of at least 1", c.name)
		return nil, false
	}
	agg.N, agg.Reverse = fc.N, fc.Reverse
	if c.fn == Sample {
		for _, k := range []string{"key", "reverse"} {
			if n := component.MappingValue(c.config, k); n != nil {
				ctx.Errorf(ctx.At(n), "combine function %s takes only n, not %s", c.name, k)
				return nil, false
			}
		}
		return nil, true
	}
	if fc.Key.Kind == 0 {
		return nil, true
	}
	key := expr.CompileAt(ctx, &fc.Key, in, opts)
	if key == nil {
		return nil, false
	}
	if k := key.Type().Kind; !ordered[k] {
		ctx.Errorf(ctx.At(&fc.Key), "the key of %s must be of a type that can be ordered, but it is %s", c.name, key.Type())
		return nil, false
	}
	agg.Keyed = true
	return key, true
}
