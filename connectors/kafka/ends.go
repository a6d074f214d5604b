package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// EndOffsets returns where every partition of the source's topics ends now, as the source
// would read it: the last stable offset with read_committed (sluice's default), else the high
// watermark. A topic that does not exist has no partitions.
//
// An open source asks through its own admin client (the run's lag metrics call it every few
// seconds, from another goroutine than Read's); a closed one (`sluice status`) through a client
// of its own.
func (s *source) EndOffsets(ctx context.Context) (schemas.Offsets, error) {
	s.mu.Lock()
	adm := s.adm
	topics := slices.Clone(s.topics)
	s.mu.Unlock()
	if adm == nil {
		admin, err := s.set.newClient()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
		defer admin.Close()
		adm = kadm.NewClient(admin)
	}
	if s.pattern != nil {
		var err error
		if topics, err = s.matching(ctx, adm); err != nil {
			return nil, fmt.Errorf("%s: %w", s.what, err)
		}
	}
	list := adm.ListEndOffsets
	if s.set.readCommitted {
		list = adm.ListCommittedOffsets
	}
	listed, err := list(ctx, topics...)
	if err != nil {
		return nil, fmt.Errorf("%s: listing the end offsets of %v: %w", s.what, topics, err)
	}
	out := schemas.Offsets{}
	var errs []error
	listed.Each(func(o kadm.ListedOffset) {
		switch {
		case errors.Is(o.Err, kerr.UnknownTopicOrPartition):
		case o.Err != nil:
			errs = append(errs, fmt.Errorf("topic %s partition %d: %w", o.Topic, o.Partition, o.Err))
		default:
			out.Set(sourceName(o.Topic), o.Partition, o.Offset)
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%s: listing the end offsets: %w", s.what, err)
	}
	return out, nil
}
