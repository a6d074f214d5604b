package python

import (
	"strings"
	"sync"
	"testing"

	"github.com/sluicehq/sluice/transforms/expr"
)

// The modules and builtins as Python gives them; each case is a callable over gameRow.
func TestModules(t *testing.T) {
	checkValues(t, expr.KindCallable, []valueCase{
		{"import re\ndef f(row):\n  return re.findall(r'(\\w)(\\w)', 'abcd')", []any{[]any{"a", "b"}, []any{"c", "d"}}},
		{"import re\ndef f(row):\n  return re.sub(r'(?P<x>l)', lambda m: m.group('x').upper(), row.user, count=1)", "aLice"},
		{"import re\ndef f(row):\n  return re.split(r'(,)\\s*', 'a, b,c')", []any{"a", ",", "b", ",", "c"}},
		{"import re\ndef f(row):\n  return re.fullmatch(r'ali', row.user) == None and re.match(r'ali', row.user).span() == (0, 3)", true},
		{"import re\ndef f(row):\n  return re.search(r'ICE', row.user, flags=re.I).start()", int64(2)},
		{"import re\ndef f(row):\n  return re.sub(r'(\\w+)@(\\w+)', r'\\2 at \\g<1>', 'me@home')", "home at me"},
		{"import json\ndef f(row):\n  return json.dumps(json.loads('{\"b\": [1, 2.5, null], \"a\": \"\\u00e9\"}'), sort_keys=True)", `{"a": "\u00e9", "b": [1, 2.5, null]}`},
		{"import json\ndef f(row):\n  return json.dumps({'a': [1]}, indent=2)", "{\n  \"a\": [\n    1\n  ]\n}"},
		{"from datetime import datetime, timedelta\ndef f(row):\n  d = datetime(2024, 2, 28, 23) + timedelta(hours=2)\n  return d.isoformat()", "2024-02-29T01:00:00"},
		{"import datetime\ndef f(row):\n  return datetime.datetime.fromtimestamp(86400).strftime('%Y-%m-%d %j %a')", "1970-01-02 002 Fri"},
		{"import math\ndef f(row):\n  return [math.floor(2.7), math.isnan(math.nan), math.trunc(-2.5)]", []any{int64(2), true, int64(-2)}},
		{"lambda row: [round(0.5), round(1.5), round(2.675, 2), pow(2, 10), divmod(-7, 2)]", []any{int64(0), int64(2), 2.67, int64(1024), []any{int64(-4), int64(1)}}},
		{"lambda row: [format(1234.5, ',.1f'), format(7, '03d'), format('ab', '^6'), format(0.25, '.0%')]", []any{"1,234.5", "007", "  ab  ", "25%"}},
		{"lambda row: [isinstance(row.score, int), isinstance(row.user, (int, str)), sum([0.5, 1])]", []any{true, true, 1.5}},
		{"lambda row: list(map(lambda t: t * 2, filter(None, row.tags + [''])))", []any{"aa", "bb"}},
		{"lambda row: row._asdict()['team']", "red"},
		{"import apache_beam as beam\nfrom typing import Optional\ndef f(row) -> Optional[str]:\n  return beam.Row(u=row.user, n=1)", map[string]any{"u": "alice", "n": int64(1)}},
		{"from datetime import datetime\ndef f(row):\n  return datetime.now().year > 2000", true},
		{`lambda row: "{:.2f}|{!r}|{0:>3}|{n:03d}|{{}}".format(row.score, row.user, n=7)`, `12.00|'alice'| 12|007|{}`},
		{`lambda row: [str(row.tags), repr("it's"), f"{row.tags!r}{None}{1.5}", str(None)]`, []any{"['a', 'b']", `"it's"`, "['a', 'b']None1.5", "None"}},
		{`lambda row: '{} {}'.format(*[1, 2]) + "x".format() + '%s' % "{}".format(row.team)`, "1 2xred"},
	})
}

// Positions inside rewritten text (f-strings, `is not`, imports) are the user's.
func TestRewrittenPositions(t *testing.T) {
	checkErrors(t, []errorCase{
		{expr.KindExpression, `f"{user!r} and {scroe:>3}"`, "p.yaml:3:23: NameError"},
		{expr.KindExpression, `nick is not None and f"{nick.uper()}" or bogus`, "p.yaml:3:48: NameError"},
		{expr.KindCallable, "import json\n\nfrom math import sqrt\ndef f(row):\n  return sqrt(row.scoer)", "p.yaml:7:19: AttributeError"},
		{expr.KindCallable, "from math import nope\ndef f(row):\n  return 1", `p.yaml:3:24: ImportError: cannot import name "nope" from "math"`},
		{expr.KindCallable, "def f(row):\n  try:\n    return 1\n  except:\n    return 2", "SyntaxError: try is not supported"},
	})
}

// Top-level code that does not end is stopped when the pipeline is validated.
func TestInitSteps(t *testing.T) {
	defer func(n uint64) { initSteps = n }(initSteps)
	initSteps = 10_000
	checkErrors(t, []errorCase{{expr.KindCallable, "n = 0\nwhile True:\n  n += 1\ndef f(row):\n  return n", "TimeoutError: the top-level code did not end"}})
}

// A row whose code does not end fails with a TimeoutError; the next row runs.
func TestRowSteps(t *testing.T) {
	defer func(n uint64) { rowSteps = n }(rowSteps)
	rowSteps = 10_000
	_, p, err := run(t, expr.KindCallable, "def f(row):\n  n = 0\n  while row.score > 0:\n    n += 1\n  return n")
	if err == nil || !strings.Contains(err.Error(), "TimeoutError: the code did not end within 10000 Starlark steps") {
		t.Fatalf("error %v, want a TimeoutError", err)
	}
	s := expr.NewEvaluator(gameSchema, p).Scope()
	defer s.Release()
	row := gameRow()
	score, _ := gameSchema.Index("score")
	row[score] = int64(0)
	s.Bind(row)
	if v, err := s.Eval(0); err != nil || v != int64(0) {
		t.Errorf("the row after a timeout: got %v, %v; want 0", v, err)
	}
}

// A runtime error inside an f-string and inside a builtin is placed at the user's code.
func TestRuntimePositions(t *testing.T) {
	checkErrors(t, []errorCase{
		{expr.KindExpression, `f"{user} {score // 0}"`, "p.yaml:3:23: ZeroDivisionError"},
		{expr.KindCallable, "import re\ndef f(row):\n  return re.match(row.user + '(?=x)', 'a')", "p.yaml:5:18: re.error: the pattern"},
		{expr.KindCallable, "lambda row: row.tags[5]", "p.yaml:3:27: IndexError"},
		{expr.KindCallable, "lambda row: fail('bad row ' + row.user)", "p.yaml:3:23: Exception: bad row alice"},
		{expr.KindCallable, "lambda row: [c for c in row.user]", "TypeError: string value is not iterable (in sluice's Python strings are not iterable: write s.elems())"},
		{expr.KindCallable, "lambda row: row.score < None", "TypeError: int < NoneType not implemented"},
		{expr.KindCallable, "lambda row: row.score ** 2", "SyntaxError: the ** operator is not supported"},
	})
}

// Lanes share one compiled program, each with its own runner, without locks.
func TestConcurrentLanes(t *testing.T) {
	_, p, err := run(t, expr.KindCallable, "import re\nP = re.compile(r'(\\w)')\ndef f(row):\n  return P.sub(r'<\\1>', row.user) + str(row.score)")
	if err != nil {
		t.Fatal(err)
	}
	ev := expr.NewEvaluator(gameSchema, p)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			s := ev.Scope()
			defer s.Release()
			for range 200 {
				s.Bind(gameRow())
				v, err := s.Eval(0)
				if err != nil || v != "<a><l><i><c><e>12" {
					t.Errorf("got %v, %v", v, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
