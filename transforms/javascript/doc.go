// Package javascript runs `language: javascript` on goja (github.com/dop251/goja), an
// ECMAScript 5.1+ interpreter in pure Go: Beam's expressions (the fields they name are
// variables), callables (a function or an arrow function taking the row: row.field) and
// functions in .js files (path + name).
//
// It registers itself with transforms/expr as the engine of language javascript; unlike
// Python, JavaScript has no expr-lang fast path, since the two languages give the same text
// different meanings (== coerces, + concatenates numbers with strings).
//
// A transform's code is parsed and compiled once (goja.Program is immutable and shared);
// goja.Runtime is not safe for concurrent use, so each lane takes a runtime of its own from
// the program's pool for the time of a row. The row is a JavaScript object whose fields are
// converted when read, nested structs too; numbers come back as integers or floats as the
// result's schema type says; timestamps are JavaScript Dates, as in Beam (js2py).
package javascript
