// Package files holds the local file connectors, for text, JSON Lines, CSV, Avro object
// container files and Parquet. The readers (ReadFromText, ReadFromJson, ReadFromCsv,
// ReadFromAvro, ReadFromParquet) read the files present when the pipeline starts, each file a
// partition, and find a writer's committed files from the writer's path (listing.go). The
// writers (WriteToText, WriteToJson, WriteToCsv, WriteToAvro, WriteToParquet) write an
// output directory exactly once, one directory per epoch, made visible by an atomic rename
// together with the checkpoint it stands on (sink.go, layout.go; shards.go for num_shards).
//
// One reader (source.go) and one writer serve every format: a format is a fileFormat (how a
// file's records are found, where a resume starts, how a record becomes a row: lines.go,
// csv.go, avro.go, parquet.go) and a writeFormat (how rows become a file). docs/files.md
// describes the formats, the on-disk layout and the commit protocol.
package files
