// Package iceberg is sluice's Apache Iceberg connector: WriteToIceberg writes rows into a table
// as Parquet data files and commits each epoch as one snapshot whose summary carries the
// pipeline's checkpoint, exactly once, also with several copies of a pipeline writing one
// table. docs/iceberg.md describes the catalog properties, the type mapping and the protocol.
package iceberg
