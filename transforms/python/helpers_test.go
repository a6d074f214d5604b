package python

import (
	"errors"
	"reflect"
)

func equal(a, b any) bool { return reflect.DeepEqual(a, b) }

func asError(err error, target any) bool { return errors.As(err, target) }
