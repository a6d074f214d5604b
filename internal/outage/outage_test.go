package outage

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log destination the timers' goroutines and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestWatch: a failure a success follows at once is no outage; a lasting one is logged when it
// starts, again every Repeat with its length, and when it ends, once for all who report it.
func TestWatch(t *testing.T) {
	var log syncBuffer
	old, oldGrace, oldRepeat := slog.Default(), grace, repeat.Load()
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	grace = 50 * time.Millisecond
	SetRepeat(200 * time.Millisecond)
	t.Cleanup(func() { slog.SetDefault(old); grace = oldGrace; repeat.Store(oldRepeat) })

	w := For("Kafka broker", "127.0.0.1:9092", "reads wait")
	if For("Kafka broker", "127.0.0.1:9092", "reads wait") != w {
		t.Fatal("two watches for one address")
	}
	w.Failed(errors.New("EOF"))
	w.OK()
	time.Sleep(100 * time.Millisecond)
	if l := log.String(); l != "" {
		t.Fatalf("a failure followed by a success at once was logged:\n%s", l)
	}

	w.Failed(errors.New("connection refused"))
	time.Sleep(500 * time.Millisecond)
	w.Failed(errors.New("connection refused again")) // another client, the same outage
	w.OK()
	w.OK()
	l := log.String()
	for _, want := range []string{
		`level=WARN msg="cannot reach Kafka broker 127.0.0.1:9092: connection refused; retrying reads wait"`,
		`level=WARN msg="still cannot reach Kafka broker 127.0.0.1:9092 after `,
		`level=INFO msg="connection to Kafka broker 127.0.0.1:9092 restored after `,
	} {
		if !strings.Contains(l, want) {
			t.Errorf("the log lacks %s:\n%s", want, l)
		}
	}
	if n := strings.Count(l, "cannot reach Kafka broker"); n < 2 || n > 4 {
		t.Errorf("%d outage lines in 500ms with a 200ms repeat:\n%s", n, l)
	}
	if n := strings.Count(l, "restored"); n != 1 {
		t.Errorf("the end of the outage was logged %d times:\n%s", n, l)
	}
}
