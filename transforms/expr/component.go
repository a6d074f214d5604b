package expr

import (
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

// OptionsFor returns how a transform compiles its expressions in language lang, reporting an
// unsupported language at the transform's `language` key.
func OptionsFor(ctx *component.Context, lang string) (Options, bool) {
	if err := CheckLanguage(lang); err != nil {
		ctx.Errorf(ctx.KeyPos("language"), "%v", err)
		return Options{}, false
	}
	return Options{Language: lang, Lines: ctx.Lines}, true
}

// CompileAt decodes the expression in n (a field name, text, or {expression, output_type})
// and compiles it against in. Problems are reported through ctx at their positions; the
// result is nil when there were any.
func CompileAt(ctx *component.Context, n *yaml.Node, in *schemas.Schema, o Options) *Program {
	spec, ok := DecodeSpec(ctx.Decoder, n, ctx.Describe())
	if !ok {
		return nil
	}
	p, err := spec.Compile(in, o)
	if err != nil {
		ctx.Diags.Append(spec.Expr.Pos, err)
		return nil
	}
	return p
}
