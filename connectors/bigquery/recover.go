package bigquery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	"github.com/sluicehq/sluice/component"
)

// youngIntent is how long after its intent a stream BigQuery does not know is taken as never
// committed. BigQuery does not document how long it keeps a committed stream's metadata; it
// is surely longer than this, so a younger intent's missing stream cannot have committed.
// For an older intent sluice does not guess.
const youngIntent = time.Hour

// recover settles the intent of st, this copy's commit that a crash interrupted, and saves st
// with the checkpoint the table stands on. Another copy that settled it already decided.
func (s *sink) recover(ctx context.Context, st *state, others map[string]*state) error {
	in := st.Intent
	var committed bool
	var how string
	var err error
	if v, ok := settledAs(s.store.self(), in.Epoch, slices.Collect(maps.Values(others))...); ok {
		committed, how = v.Committed, "another copy settled it"
	} else if committed, how, err = s.settle(ctx, in); err != nil {
		return err
	}
	if committed {
		slog.Info("BigQuery commit interrupted by a crash: "+how, "sink", s.what, "epoch", in.Epoch, "streams", len(in.Streams), "rows", in.Rows)
		*st = state{Pipeline: st.Pipeline, Table: st.Table, Epoch: in.Epoch, Next: in.Next, State: in.State, Lineage: in.Lineage}
	} else {
		slog.Warn("BigQuery commit interrupted by a crash: "+how+"; the epoch is read again", "sink", s.what, "epoch", in.Epoch, "rows", in.Rows)
		st.Intent = nil
	}
	if err := s.store.save(ctx, st, nil); err != nil {
		return fmt.Errorf("%s: %w", s.what, err)
	}
	return nil
}

// settle decides whether the commit of in happened, and says how it knows:
//   - a stream with a commit time: the commit happened (it is atomic);
//   - every stream known and none committed: they were finalized before the intent was saved,
//     so they are committed now (by whichever copy gets there first: a stream committed
//     already counts as committed);
//   - a stream unknown and none committed: the commit never happened and the rows are gone,
//     if the intent is young; else the rows of its offset ranges are counted in the table
//     (source_position_columns; a commit is atomic, so any row means all of them), or the
//     operator decides (SinkInfo.UnknownCommit, `sluice run --bigquery-intent`).
func (s *sink) settle(ctx context.Context, in *intent) (committed bool, how string, err error) {
	var missing []string
	for _, name := range in.Streams {
		ws, err := s.mw.GetWriteStream(ctx, &storagepb.GetWriteStreamRequest{Name: name, View: storagepb.WriteStreamView_BASIC})
		switch {
		case isNotFound(err):
			missing = append(missing, name)
		case err != nil:
			return false, "", fmt.Errorf("%s: look up stream %s of epoch %d's commit: %w", s.what, name, in.Epoch, err)
		case ws.GetCommitTime() != nil:
			committed = true
		}
	}
	switch {
	case committed:
		return true, "it had committed", nil
	case len(missing) == 0:
		err := s.batchCommit(ctx, in.Streams)
		var refused *commitRefused
		if err == nil {
			return true, "its streams are committed now", nil
		}
		if !errors.As(err, &refused) || !refused.gone() {
			return false, "", err
		}
		// Known but no longer committable (garbage-collected): as good as missing.
		missing = in.Streams
	}
	switch s.unknownCommit {
	case component.AssumeCommitted:
		return true, "assumed committed (--bigquery-intent)", nil
	case component.AssumeLost:
		return false, "assumed lost (--bigquery-intent)", nil
	}
	if age := time.Since(in.At); age < youngIntent {
		return false, fmt.Sprintf("BigQuery does not know stream %s of a commit %s old, so it never committed", missing[0], age.Round(time.Second)), nil
	}
	if ranges := intentRanges(in); s.p.cfg.SourcePositionColumns && len(ranges) > 0 {
		n, err := s.count(ctx, ranges)
		switch {
		case err != nil:
			return false, "", fmt.Errorf("%s: BigQuery no longer knows the streams of epoch %d's commit; counting its rows by their source positions: %w", s.what, in.Epoch, err)
		case n > 0:
			return true, fmt.Sprintf("the table holds %d of its rows (source_position_columns)", n), nil
		}
		return false, "the table holds none of its rows (source_position_columns)", nil
	}
	return false, "", fmt.Errorf("%s: a commit of epoch %d (%d rows, %s) was interrupted %s ago, and BigQuery no longer knows its stream %s: "+
		"after this long it cannot tell whether the commit happened. Look for the epoch's rows in %s and rerun with "+
		"--bigquery-intent=assume-committed if they are there or --bigquery-intent=assume-lost if not",
		s.what, in.Epoch, in.Rows, in.At.Format(time.RFC3339), time.Since(in.At).Round(time.Minute), strings.Join(missing, ", "), s.p.ref)
}
