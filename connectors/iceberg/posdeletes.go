package iceberg

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
	"github.com/sluicehq/sluice/schemas"
	"github.com/sluicehq/sluice/schemas/parquetrow"
)

// posDelete names a row the sink wrote in a data file of the commit being built: the row at
// pos (0-based) of file. An upsert deletes by position the rows of its own new files that a
// later row (or delete) of their key superseded in the same commit: the commit's equality
// deletes cannot, since they apply only to data files of a lower data sequence number, and
// position deletes apply to files of a lower or the same one (docs/iceberg.md, "The commit").
type posDelete struct {
	file string
	pos  int64
}

// keyOwnPosDeletes is the summary key that counts the position delete files of a snapshot
// that name only data files the same snapshot adds: a compaction planned before it can still
// commit (changedSince), since those deletes touch none of the files it rewrote.
const keyOwnPosDeletes = "sluice.own-position-deletes"

// posDeleteProps are the Parquet writer properties of position delete files: iceberg-go's
// defaults (zstd).
var posDeleteProps = []parquet.WriterProperty{parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDictionaryDefault(true)}

// writePosDeletes writes dels, all in data files of the unpartitioned table tbl (the write
// view), into one position delete file, sorted by file and position as the spec wants, and
// describes it (full metrics of file_path, so that readers match it to the files it names).
// It never records a ReferencedDataFile: iceberg-go's row delta checks such a file against
// the table it commits on when another commit came first, where the commit's own new files
// are not yet, and fails the commit.
func writePosDeletes(ctx context.Context, tbl *table.Table, dels []posDelete) (iceberg.DataFile, error) {
	slices.SortFunc(dels, func(a, b posDelete) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.pos, b.pos))
	})
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, err := writable(fs)
	if err != nil {
		return nil, err
	}
	loc, err := tbl.LocationProvider()
	if err != nil {
		return nil, err
	}
	path := loc.NewDataLocation(fmt.Sprintf("00000-pos-%s.parquet", uuid.NewString()))
	out, err := wfs.Create(path)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	size := &countingWriter{w: out}
	get := func(name string) func(schemas.Row) any {
		switch name {
		case "file_path":
			return func(r schemas.Row) any { return r[0] }
		case "pos":
			return func(r schemas.Row) any { return r[1] }
		}
		return nil
	}
	pw, err := parquetrow.NewWriter(size, table.PositionalDeleteArrowSchema, get, parquet.NewWriterProperties(posDeleteProps...), maxRowGroup)
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	rows := make([]schemas.Row, 0, recordRows)
	slab := make([]any, 2*recordRows)
	for chunk := range slices.Chunk(dels, recordRows) {
		rows = rows[:0]
		for i, d := range chunk {
			r := schemas.Row(slab[2*i : 2*i+2 : 2*i+2])
			r[0], r[1] = d.file, d.pos
			rows = append(rows, r)
		}
		if err = pw.Write(rows); err != nil {
			break
		}
	}
	meta, cerr := pw.Close()
	if err == nil {
		err = cerr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = wfs.Remove(path)
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	df, err := table.DataFileFromMetadata(table.DataFileArgs{
		Schema: iceberg.PositionalDeleteSchema, Spec: tbl.Spec(), Format: iceberg.ParquetFile, Metadata: meta,
		FilePath: path, FileSize: size.n, Content: iceberg.EntryContentPosDeletes,
		Properties:    iceberg.Properties{"write.metadata.metrics.default": "full"},
		FormatVersion: tbl.Metadata().Version(),
	})
	if err != nil {
		return nil, fmt.Errorf("the metrics of %s: %w", path, err)
	}
	return df, nil
}
