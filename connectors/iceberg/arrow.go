package iceberg

import "github.com/sluicehq/sluice/schemas/arrowrow"

// The conversion between rows and Arrow records (data files written, scans read) is
// schemas/arrowrow's, which connectors/files' Parquet files share; these are its names here.
type (
	converter = arrowrow.Converter
	rowError  = arrowrow.RowError
	rowReader = arrowrow.RowReader
)

var (
	newConverter = arrowrow.NewConverter
	newRowReader = arrowrow.NewRowReader
	appenderFor  = arrowrow.AppenderFor
	getterFor    = arrowrow.GetterFor
	inColumn     = arrowrow.InColumn
)
