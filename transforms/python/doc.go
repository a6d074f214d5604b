// Package python runs `language: python` on Starlark (go.starlark.net), the Python dialect
// Bazel uses, for what expr-lang cannot evaluate with Python's meaning: conditional
// expressions, string methods, f-strings, comprehensions, Beam's callables (a def or a
// lambda taking the row) and functions in .py files (path + name).
//
// It registers itself with transforms/expr as the engine of language python; expr keeps
// the fast path for the expressions whose meaning is the same in both. A transform's code
// is compiled once, checked against the input schema (syntax, names, arity, the fields a
// callable reads from its row), and frozen: lanes call the one frozen function, each with
// its own starlark.Thread, without locks.
//
// Python's `import` has no Starlark spelling: the import lines of the modules sluice
// provides natively (re on Go's regexp, json, math, datetime, time) are blanked out and
// their names predeclared, so positions in errors stay those of the user's text.
package python
