package python

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/transforms/expr"
)

func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

func asError(err error, target any) bool { return errors.As(err, target) }

// valueCase is code of a kind with the value it gives on gameRow.
type valueCase struct {
	text string
	want any
}

// checkValues runs each case's code of kind over gameRow and compares its value.
func checkValues(t *testing.T, kind expr.SourceKind, cases []valueCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.text, func(t *testing.T) {
			v, _, err := run(t, kind, tt.text)
			if err != nil {
				t.Fatal(err)
			}
			if !equal(v, tt.want) {
				t.Errorf("got %#v, want %#v", v, tt.want)
			}
		})
	}
}

// errorCase is code of a kind whose compile or run error contains want.
type errorCase struct {
	kind expr.SourceKind
	text string
	want string
}

func checkErrors(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.text, func(t *testing.T) {
			_, _, err := run(t, tt.kind, tt.text)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
}
