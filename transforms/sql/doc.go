// Package sql runs Beam's SQL: the Sql transform (a query over PCOLLECTION) and `language:
// sql` for the expressions of MapToFields and Filter, with one compiler for both.
//
// Queries are parsed by TiDB's parser (github.com/pingcap/tidb/pkg/parser, with
// PIPES_AS_CONCAT and ANSI_QUOTES) after a pass that spells the Calcite syntax it lacks in
// a form it reads: INTERVAL '1' MINUTE as a function argument, CAST(x AS VARCHAR) and the
// other Calcite type names, TRUE and FALSE as booleans. A map from the rewritten text back
// to the user's keeps every error at its file:line:col (docs/expressions.md has the
// measurement that chose the parser).
//
// Expressions compile to typed Go closures (compile.go, funcs.go), checked against the input
// schema at build time. A query without aggregates is a Filter and a MapToFields; one with
// GROUP BY or aggregates runs on transforms/combine's keyed window state (so grouped state is
// in the sinks' checkpoints): WHERE and the keys and aggregate arguments are computed before
// it, HAVING and the SELECT list over its results. TUMBLE, HOP and SESSION in GROUP BY are
// its fixed, sliding and session windows over the named timestamp column. SELECT DISTINCT is
// a GROUP BY of the selected columns. A query over several inputs (FROM a JOIN b ON a.x =
// b.y, the tables named by their inputs' names) runs on transforms/join's plan and state
// (join.go), and its WHERE, grouping and SELECT list over the rows each window joins.
package sql
