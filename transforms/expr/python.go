package expr

import (
	"fmt"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser/lexer"
)

// sourceError is a problem at a rune offset of an expression's text.
type sourceError struct {
	offset int
	msg    string
	hint   string
	// python is set when the text is valid Python that expr-lang cannot run with the same
	// meaning, so that a registered Engine may compile it instead.
	python bool
}

func (e *sourceError) Error() string { return e.msg }

// pythonReplacements are the Python words that have an expr spelling of the same meaning
// and the same length (padded), so offsets into the text stay valid.
var pythonReplacements = map[string]string{"True": "true", "False": "false", "None": "nil "}

// notPython names the tokens of expr syntax that Python has not (or that mean something
// else in Python), so that `language: python` stays portable to Beam.
var notPython = map[string]string{
	"??":         "the ?? operator",
	"?.":         "the ?. operator",
	"?":          "the ?: operator",
	"&&":         "&& (Python writes and)",
	"||":         "|| (Python writes or)",
	"!":          "! (Python writes not)",
	"|":          "the | operator",
	"&":          "the & operator",
	"^":          "^ (bitwise xor in Python, power in expr)",
	"..":         "the .. range operator",
	"let":        "let",
	"matches":    "the matches operator",
	"contains":   "the contains operator",
	"startsWith": "the startsWith operator",
	"endsWith":   "the endsWith operator",
	"true":       "true (Python writes True)",
	"false":      "false (Python writes False)",
	"nil":        "nil (Python writes None)",
}

// pythonOnly describes Python constructs expr has no equivalent for.
var pythonOnly = map[string]string{
	"if":     "conditional expressions (x if c else y) are not supported",
	"else":   "conditional expressions (x if c else y) are not supported",
	"lambda": "lambda is not supported",
	"for":    "comprehensions are not supported",
	"def":    "def is not supported",
	"yield":  "yield is not supported",
	"await":  "await is not supported",
}

// pythonFunctions suggests the expr function for a Python builtin expr lacks.
var pythonFunctions = map[string]string{
	"str": "string(x)", "sorted": "sort(list)", "isinstance": `type(x) == "string"`,
}

// pythonText checks that text, read as Python, is also an expr expression with the same
// meaning, and returns it spelled for expr.
func pythonText(text string) (string, error) {
	runes := []rune(text)
	if err := pythonRaw(runes); err != nil {
		return "", err
	}
	tokens, err := lexer.Lex(file.NewSource(text))
	if err != nil {
		return text, nil // the compiler reports it
	}
	for i, t := range tokens {
		if t.Kind == lexer.String || t.Kind == lexer.Bytes || t.Kind == lexer.EOF {
			continue
		}
		if r, ok := pythonReplacements[t.Value]; ok && t.Kind == lexer.Identifier {
			copy(runes[t.From:], []rune(r))
			continue
		}
		if t.Value == "is" {
			copy(runes[t.From:], []rune("=="))
			if i+1 < len(tokens) && tokens[i+1].Value == "not" {
				n := tokens[i+1]
				runes[t.From] = '!'
				copy(runes[n.From:], []rune("   "))
			}
			continue
		}
		if what, ok := pythonOnly[t.Value]; ok {
			hint := ""
			if t.Value == "if" || t.Value == "else" {
				hint = "write c ? x : y, or use language: generic"
			}
			return "", &sourceError{offset: t.From, msg: what + " in expressions", hint: hint, python: true}
		}
		if what, ok := notPython[t.Value]; ok {
			return "", &sourceError{offset: t.From, msg: what + " is not Python; use language: generic for expr syntax"}
		}
	}
	return string(runes), nil
}

// pythonRaw rejects what expr's lexer would read differently from Python before it gets
// the chance: // (a comment in expr, floor division in Python) and # (a comment in Python).
func pythonRaw(runes []rune) error {
	var quote rune
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote != 0:
			if r == '\\' {
				i++
			} else if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '/' && i+1 < len(runes) && runes[i+1] == '/':
			return &sourceError{offset: i, msg: "floor division (//) is not supported in expressions",
				hint: "write int(a / b) for non-negative numbers", python: true}
		case r == '#':
			return &sourceError{offset: i, msg: "comments (#) are not supported in expressions", python: true}
		}
	}
	return nil
}

// pythonMethods suggests the expr function for a Python string, list or dict method.
var pythonMethods = map[string]string{
	"upper": "upper(s)", "lower": "lower(s)", "strip": "trim(s)", "lstrip": "trim(s)", "rstrip": "trim(s)",
	"startswith": "hasPrefix(s, prefix)", "endswith": "hasSuffix(s, suffix)", "split": "split(s, sep)",
	"replace": "replace(s, old, new)", "join": "join(list, sep)", "find": "indexOf(s, sub)",
	"keys": "keys(m)", "values": "values(m)", "get": "m[key] ?? default (language: generic)",
}

// pythonTree rejects Python constructs that parse in expr with another meaning or none:
// method calls such as s.upper().
func pythonTree(tree ast.Node) error {
	var err error
	ast.Find(tree, func(n ast.Node) bool {
		call, ok := n.(*ast.CallNode)
		if !ok {
			return false
		}
		m, ok := call.Callee.(*ast.MemberNode)
		if !ok {
			return false
		}
		name := "a method"
		prop, _ := m.Property.(*ast.StringNode)
		if prop != nil {
			name = "." + prop.Value + "()"
		}
		se := &sourceError{offset: m.Property.Location().From, msg: fmt.Sprintf("method calls such as %s are not supported in expressions", name), python: true}
		if prop != nil {
			if f, ok := pythonMethods[prop.Value]; ok {
				se.hint = "write " + f
			}
		}
		err = se
		return true
	})
	return err
}
