package schemas

import (
	"bytes"
	"math/big"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// yamlNode parses text into the node a pipeline loader would hand over.
func yamlNode(t testing.TB, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatalf("bad test YAML: %v", err)
	}
	return doc.Content[0]
}

// sameValue compares row values the way a user would: decimals by value, instants by time,
// byte slices by content, containers element by element.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case *big.Rat:
		y, ok := b.(*big.Rat)
		return ok && x.Cmp(y) == 0
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y) && x.Location() == y.Location()
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameValue(v, w) {
				return false
			}
		}
		return true
	case Row:
		y, ok := b.(Row)
		return ok && sameValue([]any(x), []any(y))
	}
	return a == b
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t
}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}
