package expr

import (
	"regexp"
	"strings"
)

// goTypeNames maps the Go type names expr-lang puts in its messages to the names users know
// from schemas; longer names come first so that "map[string]interface {}" is not half done.
var goTypeNames = strings.NewReplacer(
	"map[string]interface {}", "map",
	"[]interface {}", "array",
	"interface {}", "any",
	"map[string]any", "map",
	"[]any", "array",
	"<nil>", "null",
	"time.Duration", "duration",
	"time.Time", "timestamp",
	"[]string", "array<string>",
	"[]uint8", "bytes",
	"[]byte", "bytes",
)

var (
	intNames    = regexp.MustCompile(`\b(?:u?int(?:8|16|32|64)?)\b`)
	floatNames  = regexp.MustCompile(`\bfloat(?:32|64)\b`)
	boolNames   = regexp.MustCompile(`\bbool\b`)
	tokenNames  = regexp.MustCompile(`unexpected token (?:Operator|Bracket|Identifier|Number|String|Bytes)\(("(?:[^"\\]|\\.)*")\)`)
	locationTag = regexp.MustCompile(` \(\d+:\d+\)$`)
)

// cleanMessage rewrites an expr-lang message for users: no source snippet, no position
// suffix (the diagnostic carries the position), and schema type names instead of Go ones.
func cleanMessage(msg string) string {
	msg, _, _ = strings.Cut(msg, "\n")
	msg = locationTag.ReplaceAllString(msg, "")
	msg = tokenNames.ReplaceAllString(msg, "unexpected $1")
	msg = strings.ReplaceAll(msg, "unexpected token EOF", "unexpected end of the expression")
	msg = strings.ReplaceAll(msg, "literal not terminated", "string literal not terminated")
	msg = goTypeNames.Replace(msg)
	msg = intNames.ReplaceAllString(msg, "integer")
	msg = floatNames.ReplaceAllString(msg, "number")
	msg = boolNames.ReplaceAllString(msg, "boolean")
	return msg
}
