package confluent_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"reflect"
	"testing"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas/confluent"
	"github.com/sluicehq/sluice/schemas/confluent/confluenttest"
)

// A registry that cannot be reached or fails is worth waiting for at start
// (component.Unreachable); one that refuses the credentials is not.
func TestRegistryFailureIsTransient(t *testing.T) {
	confluenttest.FewAttempts(t)
	g := confluenttest.NewServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	lookup := func(url string) error {
		reg, err := confluent.NewRegistry(url, "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = reg.Latest(context.Background(), "s-value")
		return err
	}
	if err := lookup(gone); !component.Unreachable(err) {
		t.Errorf("registry gone: %v, want it unreachable", err)
	}
	g.Fail = func(*http.Request) bool { return true }
	if err := lookup(g.URL); !component.Unreachable(err) || !errors.Is(err, confluent.ErrUnavailable) {
		t.Errorf("registry failing: %v, want it unavailable and unreachable", err)
	}
	g.Fail, g.User, g.Pass = nil, "reader", "pw"
	if err := lookup(g.URLWith("reader", "wrong")); component.Unreachable(err) || !errors.Is(err, confluent.ErrUnavailable) {
		t.Errorf("credentials refused: %v, want it unavailable but not worth waiting for", err)
	}
}

// The value of a wire-format record, as a raw consumer sees it, is the header and the Avro body.
func TestWireHeader(t *testing.T) {
	v := confluenttest.WireValue(0x01020304, []byte{9})
	if !reflect.DeepEqual(v, []byte{0, 1, 2, 3, 4, 9}) {
		t.Errorf("wire value %v", v)
	}
	for _, bad := range [][]byte{nil, {0, 1, 2, 3}, {1, 0, 0, 0, 1}} {
		if _, _, err := confluent.Split(bad); !errors.Is(err, confluent.ErrNotWire) {
			t.Errorf("splitWire(%v) = %v", bad, err)
		}
	}
}
