package protobuf

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluicehq/sluice/schemas"
)

// Error is a row value the Encoder cannot write (or, from NewEncoder, a row type): Path says
// where, Err what. Its text names the path as "field a: element 2: key \"k\": "; a connector
// that words paths its own way (BigQuery's "a[2][k]") reads Path and Err instead.
type Error struct {
	Path []Step
	Err  error
}

// Step is one step of an Error's path: a message field, an array element or a map entry.
type Step struct {
	Field protoreflect.FieldDescriptor // the field, for a field step; nil otherwise
	Index int                          // the element's index, for an element step
	Key   string                       // the entry's key, for an entry step
	entry bool
}

// IsElement reports a step into an array element (Index); IsEntry one into a map entry (Key).
func (s Step) IsElement() bool { return s.Field == nil && !s.entry }

// IsEntry reports a step into the entry of a map (Key).
func (s Step) IsEntry() bool { return s.entry }

func (e *Error) Error() string {
	var b strings.Builder
	for _, s := range e.Path {
		switch {
		case s.Field != nil:
			fmt.Fprintf(&b, "field %s: ", s.Field.Name())
		case s.entry:
			fmt.Fprintf(&b, "key %q: ", s.Key)
		default:
			fmt.Fprintf(&b, "element %d: ", s.Index)
		}
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// under returns err one step further down the path: s comes first.
func under(err error, s Step) error {
	if e, ok := err.(*Error); ok {
		e.Path = append([]Step{s}, e.Path...)
		return e
	}
	return &Error{Path: []Step{s}, Err: err}
}

func inField(err error, fd protoreflect.FieldDescriptor) error { return under(err, Step{Field: fd}) }
func inElement(err error, i int) error                         { return under(err, Step{Index: i}) }
func inEntry(err error, key string) error                      { return under(err, Step{Key: key, entry: true}) }

// The values a message cannot hold where the row has them.
var (
	ErrNullElement  = errors.New("a repeated field cannot hold null")
	ErrNullRequired = errors.New("a required field cannot be null")
	ErrNullMapValue = errors.New("a map value cannot be null")
	ErrInvalidUTF8  = errors.New("is not valid UTF-8")
	errNotInteger   = errors.New("is not an integer")
)

// KindError is a value of a kind the field does not take: What names the field's type
// ("a repeated field", "message shop.Item", "int32"), Want the kind it takes ("an array").
type KindError struct {
	What, Want string
	Value      any
}

func (e *KindError) Error() string {
	return fmt.Sprintf("%s takes %s, not a %s value", e.What, e.Want, schemas.KindOf(e.Value))
}

// KeyError is a map key the map's key type cannot hold.
type KeyError struct {
	Key string
	Err error
}

func (e *KeyError) Error() string {
	if errors.Is(e.Err, errNotInteger) || errors.Is(e.Err, errNotBool) || errors.Is(e.Err, ErrInvalidUTF8) {
		return "key " + strconv.Quote(e.Key) + " " + e.Err.Error()
	}
	return fmt.Sprintf("key %q: %v", e.Key, e.Err)
}

func (e *KeyError) Unwrap() error { return e.Err }
