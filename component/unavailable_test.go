package component

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, refused := net.DialTimeout("tcp", addr, time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Nanosecond)
	defer cancel()
	_, timedOut := (&net.Dialer{}).DialContext(ctx, "tcp", "192.0.2.1:9092")
	cases := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("topic \"x\" does not exist"), false},
		{fmt.Errorf("connecting to %s: %w", addr, refused), true},
		{fmt.Errorf("schema registry: %w", ErrUnavailable), true},
		{&net.DNSError{Err: "no such host", Name: "kafka-0", IsNotFound: true}, true},
		{timedOut, true},
		{context.Canceled, false},
	}
	for _, c := range cases {
		if got := Unreachable(c.err); got != c.want {
			t.Errorf("Unreachable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
