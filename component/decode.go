package component

import (
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/schemas"
)

// NotTheRecord marks a decode failure that is not the record's fault (a schema registry that
// cannot be reached): DecodeBatch stops the pipeline with it rather than sending the record to
// the error output, so the record is read again on the next run.
type NotTheRecord struct{ Err error }

func (e *NotTheRecord) Error() string { return e.Err.Error() }

func (e *NotTheRecord) Unwrap() error { return e.Err }

// DecodeBatch is the Decode step most sources share: it turns each raw record i of b into a
// row with decode, emits the rows on Main with schema out (keeping positions and times), and
// sends the records that fail to errOut (nil: the first failure stops the pipeline at its
// position).
func DecodeBatch(b *schemas.Batch, out *schemas.Schema, errOut *ErrorOutput, emit Emit,
	decode func(i int, raw []byte) (schemas.Row, error)) error {
	if len(b.Raw) == 0 {
		return nil
	}
	good := &schemas.Batch{Schema: out, Rows: make([]schemas.Row, 0, len(b.Raw)), Pos: b.Pos, Time: b.Time}
	var errs *schemas.Batch
	var failed bool
	for i, raw := range b.Raw {
		row, err := decode(i, raw)
		if err != nil {
			var nt *NotTheRecord
			if errors.As(err, &nt) {
				return fmt.Errorf("decoding the record at %s: %w", b.Pos[i], err)
			}
			if errs, err = errOut.Add(errs, b, i, err); err != nil {
				return err
			}
			if !failed { // positions and times no longer line up with b's: copy them from here
				failed = true
				good.Pos = append([]schemas.Position(nil), b.Pos[:i]...)
				if b.Time != nil {
					good.Time = append([]time.Time(nil), b.Time[:i]...)
				}
			}
			continue
		}
		good.Rows = append(good.Rows, row)
		if failed {
			good.Pos = append(good.Pos, b.Pos[i])
			if i < len(b.Time) {
				good.Time = append(good.Time, b.Time[i])
			}
		}
	}
	if len(good.Rows) > 0 {
		if err := emit(Main, good); err != nil {
			return err
		}
	}
	return errOut.Emit(errs, emit)
}
