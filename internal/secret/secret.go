// Package secret resolves references to secrets in configuration values (${env:NAME} and
// ${file:PATH}) and keeps the set of secret values of a pipeline, whose Mask is the last guard
// over logs and runtime errors (rendered text is masked by position, in package templates).
package secret

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// ref is a reference in a value: ${env:NAME} or ${file:PATH}.
var ref = regexp.MustCompile(`\$\{(env|file):([^}]*)\}`)

// Ref is one reference that Expand resolved.
type Ref struct {
	// Text is the reference as written, e.g. "${env:KAFKA_PASSWORD}".
	Text string
	// Value is what it resolved to.
	Value string
}

// HasRef reports whether v holds a ${env:NAME} or ${file:PATH} reference.
func HasRef(v string) bool { return strings.Contains(v, "${env:") || strings.Contains(v, "${file:") }

// Expand replaces every ${env:NAME} in v with the environment variable's value and every
// ${file:PATH} with the file's content (without one trailing newline), and returns the
// references it resolved. An unset variable or an unreadable file is an error that names it;
// errors never hold a resolved value.
func Expand(v string) (string, []Ref, error) {
	if !HasRef(v) {
		return v, nil, nil
	}
	var refs []Ref
	var err error
	out := ref.ReplaceAllStringFunc(v, func(text string) string {
		m := ref.FindStringSubmatch(text)
		value, e := resolve(m[1], m[2])
		if e != nil {
			if err == nil {
				err = e
			}
			return ""
		}
		refs = append(refs, Ref{Text: text, Value: value})
		return value
	})
	return out, refs, err
}

func resolve(kind, name string) (string, error) {
	if name == "" {
		return "", fmt.Errorf("${%s:} needs a name", kind)
	}
	if kind == "env" {
		v, ok := os.LookupEnv(name)
		if !ok {
			return "", fmt.Errorf("environment variable %s is not set", name)
		}
		return v, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("cannot read the secret file %s: %w", name, errNoValue(err))
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

// errNoValue keeps the reason of a file error (it never holds the file's content).
func errNoValue(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Set is a set of secret values, each with the label that replaces it in masked text. It is
// safe for concurrent use; the zero value is ready to use.
type Set struct {
	mu     sync.RWMutex
	values map[string]string // value -> label
	order  []string          // values, longest first, so that a secret inside another is masked whole
}

// Add records value as a secret shown as label. Empty values are ignored.
func (s *Set) Add(value, label string) {
	if s == nil || value == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.values == nil {
		s.values = map[string]string{}
	}
	if _, ok := s.values[value]; ok {
		return
	}
	s.values[value] = label
	s.order = append(s.order, value)
	sort.SliceStable(s.order, func(i, j int) bool { return len(s.order[i]) > len(s.order[j]) })
}

// Merge adds every secret of o to s.
func (s *Set) Merge(o *Set) {
	if s == nil || o == nil || s == o {
		return
	}
	o.mu.RLock()
	values := make(map[string]string, len(o.values))
	for v, l := range o.values {
		values[v] = l
	}
	o.mu.RUnlock()
	for v, l := range values {
		s.Add(v, l)
	}
}

// Len returns the number of secrets in s.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.order)
}

// MinGuarded is the length from which Mask looks for a secret in text. A shorter value would
// be found inside ordinary words (a password "p" in "type"): such values are kept out of
// messages where they are placed (templates mask by position), not searched for.
const MinGuarded = 4

// Mask is the last guard for text that no position tells about: logs and runtime errors of
// components, which never print secrets by design. It replaces every secret value of at
// least MinGuarded bytes that stands as a whole word (not inside a longer run of letters
// and digits) by its label. Text made from a rendered template is masked by position
// (templates.Result), never by this search.
func (s *Set) Mask(text string) string {
	if s == nil {
		return text
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.order {
		if len(v) >= MinGuarded && strings.Contains(text, v) {
			text = replaceWords(text, v, s.values[v])
		}
	}
	return text
}

// replaceWords replaces the occurrences of v in text that do not continue a word: where v
// starts (ends) with a letter or digit, the byte before (after) it is not one.
func replaceWords(text, v, label string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, v)
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		end := i + len(v)
		whole := (i == 0 || !isWord(text[i-1]) || !isWord(v[0])) &&
			(end == len(text) || !isWord(text[end]) || !isWord(v[len(v)-1]))
		if whole {
			b.WriteString(text[:i])
			b.WriteString(label)
		} else {
			b.WriteString(text[:i+1])
			end = i + 1
		}
		text = text[end:]
	}
}

// isWord reports whether c is part of a word: an ASCII letter or digit, or a byte of a
// multi-byte character.
func isWord(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}
