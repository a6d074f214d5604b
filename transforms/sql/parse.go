package sql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values (ast.ValueExpr) without TiDB's server types
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/transforms/expr"
)

// source is the user's SQL text, as the parser reads it (a query, or an expression inside
// a generated query) and as the file holds it.
type source struct {
	e     component.Expr
	lines []string // the pipeline file's lines, for positions inside folded scalars
	// prefix and suffix wrap the user's text into the query parsed (an expression of
	// language sql is parsed as "SELECT <text> FROM PCOLLECTION").
	prefix, suffix string
	rw             rewritten
}

// pos returns the file position of byte offset off of the rewritten text.
func (s *source) pos(off int) diag.Pos {
	o := s.rw.origin(off) - len(s.prefix)
	text := s.e.Text
	o = max(0, min(o, len(text)))
	return expr.PosAt(s.e, s.lines, utf8.RuneCountInString(text[:o]))
}

// at returns the file position of a node of the parsed query.
func (s *source) at(n ast.Node) diag.Pos {
	if e, ok := n.(ast.ExprNode); ok {
		return s.pos(e.OriginTextPosition())
	}
	return s.pos(0)
}

// maxNumber is the most characters of a number literal: TiDB's literal driver panics on
// integers of more digits than its decimals hold.
const maxNumber = 60

// parse parses the one statement of s.
func (s *source) parse() (stmt ast.StmtNode, err error) {
	s.rw = rewrite(s.prefix + s.e.Text + s.suffix)
	for _, t := range tokens(s.rw.text) {
		if t.kind == tokNumber && t.end-t.start > maxNumber {
			return nil, diag.Diagnostic{Pos: s.pos(t.start), Summary: fmt.Sprintf("the number has more than %d digits", maxNumber)}
		}
	}
	defer func() {
		if r := recover(); r != nil { // the parser's, on input it does not expect
			stmt, err = nil, diag.Diagnostic{Pos: s.pos(0), Summary: fmt.Sprintf("the SQL parser failed on the query: %v", r)}
		}
	}()
	p := parser.New()
	p.SetSQLMode(mysql.ModePipesAsConcat | mysql.ModeANSIQuotes)
	stmts, _, err := p.Parse(s.rw.text, "", "")
	if err != nil {
		return nil, s.syntaxError(err)
	}
	switch len(stmts) {
	case 0:
		return nil, diag.Diagnostic{Pos: s.pos(0), Summary: "the query is empty"}
	case 1:
		stmts[0].Accept(countIf{})
		return stmts[0], nil
	}
	return nil, diag.Diagnostic{Pos: s.at(stmts[1]), Summary: "the query holds several statements; Sql runs one SELECT"}
}

// word returns the file position of the first word or quoted name after FROM that reads
// name (TiDB's parser keeps no position for table names), else of the query's start.
func (s *source) word(name string) diag.Pos {
	from := false
	for _, t := range tokens(s.rw.text) {
		text := s.rw.text[t.start:t.end]
		if t.kind == tokQuoted && len(text) >= 2 {
			text = text[1 : len(text)-1]
		}
		switch {
		case t.kind == tokWord && strings.EqualFold(text, "FROM"):
			from = true
		case from && (t.kind == tokWord || t.kind == tokQuoted) && text == name:
			return s.pos(t.start)
		}
	}
	return s.pos(len(s.prefix))
}

// tidbError reads the place out of the parser's message: "... line 1 column 28 near "x) AS ..." ".
var tidbError = regexp.MustCompile(`line (\d+) column (\d+) near "((?s).*)"\s*$`)

// syntaxError places the parser's error at the token it stopped at, in the user's text.
func (s *source) syntaxError(err error) error {
	m := tidbError.FindStringSubmatch(err.Error())
	if m == nil {
		return diag.Diagnostic{Pos: s.pos(0), Summary: "SQL syntax error: " + err.Error()}
	}
	line, _ := strconv.Atoi(m[1])
	col, _ := strconv.Atoi(m[2])
	start := 0
	for l := 1; l < line; l++ {
		i := strings.IndexByte(s.rw.text[start:], '\n')
		if i < 0 {
			break
		}
		start += i + 1
	}
	end := min(start+col, len(s.rw.text))
	near := m[3]
	if near == "" {
		return diag.Diagnostic{Pos: s.pos(len(s.rw.text) - len(s.suffix)), Summary: "SQL syntax error: the query ends too soon"}
	}
	// The column is the end of the token the parser stopped at; near starts with it.
	off := end
	for k := end; k >= start; k-- {
		if strings.HasPrefix(s.rw.text[k:], near) || strings.HasPrefix(near, s.rw.text[k:]) {
			off = k
			break
		}
	}
	tok := near
	if ts := tokens(near); len(ts) > 0 {
		tok = near[ts[0].start:ts[0].end]
	}
	tok = strings.ReplaceAll(strings.ReplaceAll(tok, intervalFn+"(", "INTERVAL "), castFn, "CAST")
	if off >= len(s.rw.text)-len(s.suffix) {
		return diag.Diagnostic{Pos: s.pos(off), Summary: "SQL syntax error: the expression ends too soon"}
	}
	return diag.Diagnostic{Pos: s.pos(off), Summary: fmt.Sprintf("SQL syntax error at %q", tok)}
}

// countIf turns COUNTIF(condition), which TiDB's parser reads as a scalar function, into the
// aggregate it is.
type countIf struct{}

func (countIf) Enter(n ast.Node) (ast.Node, bool) { return n, false }

func (countIf) Leave(n ast.Node) (ast.Node, bool) {
	if f, ok := n.(*ast.FuncCallExpr); ok && f.FnName.L == "countif" {
		agg := &ast.AggregateFuncExpr{F: "countif", Args: f.Args}
		agg.SetOriginTextPosition(f.OriginTextPosition())
		return agg, true
	}
	return n, true
}
