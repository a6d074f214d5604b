// Package expr compiles and evaluates the expressions of a pipeline (MapToFields fields,
// Filter's keep, Partition's by, ...) with expr-lang against a row schema.
//
// Compile type-checks an expression once, at validation time, with every input field as a
// variable of its schema type, so an unknown field or a type error is a config error placed
// inside the YAML. At run time an Evaluator binds the fields a set of programs reads from a
// row into a pooled environment and runs them; runtime failures (division by zero, null
// arithmetic) are errors for that row. docs/expressions.md describes the language as users
// see it.
package expr
