package iceberg

import (
	"context"

	"github.com/apache/iceberg-go/catalog"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

// tableReader is what ReadFromIceberg and ReadFromIcebergCDC share: the catalog, the data
// files being read, the offsets they reached, and the filter and column selection.
type tableReader struct {
	plan    *readPlan
	cat     catalog.Catalog
	scan    *fileScan // the files being read; nil: none
	offsets schemas.Offsets
	ctx     context.Context // bounds the reading of files, across Reads
	cancel  context.CancelFunc
}

// Offsets returns the offset of the next row to emit.
func (r *tableReader) Offsets() schemas.Offsets { return r.offsets.Clone() }

// Decode applies the filter and the column selection.
func (r *tableReader) Decode(_ context.Context, b *schemas.Batch, emit component.Emit) error {
	return r.plan.decode(b, emit)
}

// Close stops reading and closes the catalog; the source can be opened again.
func (r *tableReader) Close() error {
	if r.scan != nil {
		r.scan.close()
		r.scan = nil
	}
	if r.cancel != nil {
		r.cancel()
	}
	cat := r.cat
	r.cat = nil
	if cat == nil {
		return nil
	}
	return closeCatalog(cat)
}
