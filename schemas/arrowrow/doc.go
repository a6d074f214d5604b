// Package arrowrow converts between rows and Apache Arrow record batches, the in-memory form
// of the columnar formats: rows to records for a Parquet file or an Iceberg data file
// (Converter), records back to rows (RowReader), and a row schema to an Arrow schema and back
// (ArrowSchema, SchemaOf). It knows Arrow's types, not the files: the connectors read and
// write Parquet with arrow-go's pqarrow.
package arrowrow
