package embedded

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The shared broker is one broker, reached over TCP, that creates topics on first use.
func TestSharedBrokerRoundTrip(t *testing.T) {
	addr, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := Addr(); again != addr {
		t.Fatalf("second Addr() = %s, want the same broker %s", again, addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.AllowAutoTopicCreation(), kgo.MetadataMinAge(100*time.Millisecond),
		kgo.ConsumeTopics("round-trip"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "round-trip", Value: []byte("hello")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatal("no record came back:", err)
		}
		var got []string
		fs.EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
		if len(got) > 0 {
			if got[0] != "hello" {
				t.Fatalf("got %q", got)
			}
			return
		}
	}
}
