package iceberg

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

func init() {
	component.RegisterSink("WriteToIceberg",
		"Writes rows to an Apache Iceberg table, creating it from the rows' schema if missing; each epoch is one snapshot that carries the pipeline's checkpoint.",
		buildWrite)
}

// WriteConfig is the config of WriteToIceberg.
type WriteConfig struct {
	Table                      string                   `yaml:"table" required:"true" doc:"The table, as namespace.name (db.events), created from the rows' schema when missing. Its name may route each row by fields of the input: db.events_{country} (values lower-cased, characters other than a-z, 0-9 and _ replaced by _)."`
	CatalogName                string                   `yaml:"catalog_name" doc:"The catalog's name (default sluice). The SQL catalog keys its rows by it."`
	CatalogProperties          map[string]string        `yaml:"catalog_properties" doc:"Properties of the catalog, as iceberg-go and Beam take them: type (sql, rest, hadoop, glue, hive), uri, warehouse, credential, ... Default: a SQLite catalog with a local warehouse in ./warehouse (see docs/iceberg.md)."`
	ConfigProperties           map[string]string        `yaml:"config_properties" doc:"Storage properties (s3.*, gcs.*, ...), passed to the catalog under catalog_properties."`
	TriggeringFrequencySeconds component.Duration       `yaml:"triggering_frequency_seconds" doc:"How often to commit a snapshot: seconds, or a duration such as 1m. Sets the pipeline's epoch length (the shortest of all sinks wins)."`
	Keep                       []string                 `yaml:"keep" doc:"Write only these fields of the rows."`
	Drop                       []string                 `yaml:"drop" doc:"Write every field of the rows but these."`
	Only                       string                   `yaml:"only" doc:"Write the fields of this one struct field of the rows."`
	PartitionFields            []string                 `yaml:"partition_fields" doc:"Partitioning of a new table: column names (identity) and transforms year(c), month(c), day(c), hour(c), bucket(c, N), truncate(c, W)."`
	TableProperties            map[string]string        `yaml:"table_properties" doc:"Properties of a new table, e.g. write.target-file-size-bytes (default 134217728) or write.parquet.compression-codec. sluice also sets write.metadata.delete-after-commit.enabled and commit.manifest-merge.enabled to true unless given."`
	SchemaEvolution            string                   `yaml:"schema_evolution" alias:"schema_update" doc:"none (the default; off is the same: an existing table must have every column of the rows) or add_columns (add the rows' nullable columns an existing table lacks, when the sink opens and when the rows gain fields mid-run, and widen int and float columns to long and double)."`
	ErrorHandling              *component.ErrorHandling `yaml:"error_handling" doc:"Send rows that name no table (a null or empty routing field) or cannot be converted to the table's types to this output as {failed_row, error_message, source} instead of stopping the pipeline."`
	Upsert                     *UpsertConfig            `yaml:"upsert" doc:"Keep the latest row per key instead of appending: {key: [id], delete: \"op == 'd'\"}. Each epoch's commit writes equality deletes for the keys it changes and the newest row of each key, in one snapshot (see docs/iceberg.md)."`
	Compaction                 *CompactionConfig        `yaml:"compaction" doc:"Compact the table while streaming: {target_file_size_mb: 128, min_input_files: 5, every: 1m}. Rewrites a partition's small data files (and the deletes that apply to them) into files of the target size, between commits (see docs/iceberg.md)."`
	ExpireSnapshotsOlderThan   component.Duration       `yaml:"expire_snapshots_older_than" doc:"Expire the table's snapshots older than this (e.g. 1d) after commits, keeping history.expire.min-snapshots-to-keep and the newest snapshot carrying the pipeline's checkpoint. Default: never."`
}

// DefaultTargetFileSize is the size at which data files roll when the table sets none.
const DefaultTargetFileSize = 128 << 20

// plan is what building WriteToIceberg decides: how input rows become table rows, and the
// schema, partitioning and properties of the table when it has to be created.
type plan struct {
	input      *schemas.Schema // the sink's input
	route      *router         // names each row's table; nil: one table
	errOut     *component.ErrorOutput
	rows       *schemas.Schema // the rows written, after keep, drop or only
	project    func(schemas.Row) schemas.Row
	schema     *iceberg.Schema
	spec       iceberg.PartitionSpec
	parts      []partitionField
	tableProps iceberg.Properties
	upsert     *upsertPlan // nil: append
}

func buildWrite(c *component.Context, cfg *WriteConfig) (component.Sink, error) {
	before := len(*c.Diags)
	if cfg.ExpireSnapshotsOlderThan < 0 {
		c.Errorf(c.KeyPos("expire_snapshots_older_than"), "expire_snapshots_older_than must be positive")
	}
	checkCompaction(c, cfg.Compaction)
	if cfg.TriggeringFrequencySeconds < 0 {
		c.Errorf(c.KeyPos("triggering_frequency_seconds"), "triggering_frequency_seconds must be positive")
	} else if cfg.TriggeringFrequencySeconds > 0 {
		c.SetTrigger(time.Duration(cfg.TriggeringFrequencySeconds))
	}
	switch cfg.SchemaEvolution {
	case "", evolveNone, addColumns:
	case "off": // issue 22's spelling, with the key schema_update
		cfg.SchemaEvolution = evolveNone
	default:
		key := "schema_evolution"
		if component.MappingValue(c.Config, "schema_update") != nil {
			key = "schema_update"
		}
		c.Errorf(c.KeyPos(key), "%s: %q is not one of %s, %s", key, cfg.SchemaEvolution, evolveNone, addColumns)
	}
	if _, err := catalogProps(cfg); err != nil {
		c.Errorf(c.KeyPos("catalog_properties"), "%v", err)
	}
	p := &plan{input: c.Input(), tableProps: tableProps(c, cfg)}
	var err error
	for i, s := range cfg.PartitionFields {
		f, err := parsePartitionField(s)
		if err != nil {
			c.Errorf(listItemPos(c, "partition_fields", i), "%v", err)
			continue
		}
		p.parts = append(p.parts, f)
	}
	if p.input == nil {
		return nil, fmt.Errorf("%s needs an input", c.Describe())
	}
	if strings.ContainsAny(cfg.Table, "{}") {
		if p.route, err = parseRouter(cfg.Table, p.input); err != nil {
			c.Errorf(c.KeyPos("table"), "%v", err)
		}
	} else if _, err := identifier(cfg.Table); err != nil {
		c.Errorf(c.KeyPos("table"), "%v", err)
	}
	p.errOut = c.ErrorOutput(cfg.ErrorHandling, p.input, component.IOShape)
	if !project(c, cfg, p) {
		return nil, nil
	}
	sc, err := tableSchema(p.rows)
	if err != nil {
		c.Errorf(c.Pos, "%s: the rows cannot become an Iceberg table: %v", c.Describe(), err)
		return nil, nil
	}
	if cfg.Upsert != nil {
		if p.upsert = buildUpsert(c, cfg, p); p.upsert != nil {
			if sc, err = withIdentifiers(sc, p.upsert.key); err != nil {
				c.Errorf(c.KeyPos("upsert"), "%v", err)
			}
		}
	}
	p.schema = sc
	for i, f := range p.parts {
		if _, err := f.bind(sc); err != nil {
			c.Errorf(listItemPos(c, "partition_fields", i), "%v", err)
		}
	}
	if len(*c.Diags) > before {
		return nil, nil
	}
	if p.spec, err = partitionSpec(p.parts, sc); err != nil {
		c.Errorf(c.KeyPos("partition_fields"), "%v", err)
		return nil, nil
	}
	return newSink(c.Describe(), cfg, p), nil
}

// tableProps returns the properties of a new table, checking the sizes sluice reads.
func tableProps(c *component.Context, cfg *WriteConfig) iceberg.Properties {
	props := iceberg.Properties{}
	for k, v := range cfg.TableProperties {
		props[k] = v
	}
	for _, k := range []string{targetFileSizeKey, rowGroupSizeKey} {
		if v, ok := props[k]; ok {
			if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
				c.Errorf(c.KeyPos("table_properties"), "table_properties: %s must be a positive number of bytes, not %q", k, v)
			}
		}
	}
	setNewTableDefaults(props)
	return props
}

// project sets p.rows and p.project from keep, drop or only; it reports whether they are valid.
func project(c *component.Context, cfg *WriteConfig, p *plan) bool {
	set := 0
	for _, b := range []bool{cfg.Keep != nil, cfg.Drop != nil, cfg.Only != ""} {
		if b {
			set++
		}
	}
	if set > 1 {
		c.Errorf(c.Pos, "%s: keep, drop and only exclude each other; use one", c.Describe())
		return false
	}
	in := p.input
	p.rows, p.project = in, func(r schemas.Row) schemas.Row { return r }
	switch {
	case cfg.Only != "":
		f, ok := in.Field(cfg.Only)
		if !ok || f.Type.Kind != schemas.Struct {
			c.Errorf(c.KeyPos("only"), "only: %q is not a struct field of the input%s", cfg.Only, diag.DidYouMean(cfg.Only, in.Names()))
			return false
		}
		i, _ := in.Index(cfg.Only)
		p.rows = schemas.New(f.Type.Fields...)
		names := p.rows.Names()
		p.project = func(r schemas.Row) schemas.Row {
			m, _ := r[i].(map[string]any)
			out := make(schemas.Row, len(names))
			for j, n := range names {
				out[j] = m[n]
			}
			return out
		}
	case cfg.Keep != nil || cfg.Drop != nil:
		key, list := "keep", cfg.Keep
		if cfg.Drop != nil {
			key, list = "drop", cfg.Drop
		}
		named := map[string]bool{}
		ok := true
		for j, n := range list {
			if _, found := in.Index(n); !found {
				c.Errorf(listItemPos(c, key, j), "%s: no field %q in the input%s", key, n, diag.DidYouMean(n, in.Names()))
				ok = false
			}
			named[n] = true
		}
		if !ok {
			return false
		}
		var idx []int
		var fields []schemas.Field
		for j, f := range in.Fields {
			if named[f.Name] == (key == "keep") {
				idx, fields = append(idx, j), append(fields, f)
			}
		}
		if len(fields) == 0 {
			c.Errorf(c.KeyPos(key), "%s leaves no field to write", key)
			return false
		}
		p.rows = schemas.New(fields...)
		p.project = func(r schemas.Row) schemas.Row {
			out := make(schemas.Row, len(idx))
			for k, j := range idx {
				out[k] = r[j]
			}
			return out
		}
	}
	return true
}

// listItemPos is the position of item i of the list under key, or of the key.
func listItemPos(c *component.Context, key string, i int) diag.Pos {
	if n := component.MappingValue(c.Config, key); n != nil && i < len(n.Content) {
		return c.At(n.Content[i])
	}
	return c.KeyPos(key)
}
