package bigquery

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/schemas"
)

func init() {
	component.RegisterSink("WriteToBigQuery",
		"Writes rows to a BigQuery table over the Storage Write API: exactly once with one set of pending streams per epoch, committed atomically with the pipeline's checkpoint, or at least once through the table's default stream.",
		buildWrite)
}

// WriteConfig is the config of WriteToBigQuery.
type WriteConfig struct {
	Table                      string                   `yaml:"table" required:"true" doc:"The table, as project:dataset.table or project.dataset.table."`
	CreateDisposition          string                   `yaml:"create_disposition" enum:"CREATE_IF_NEEDED,CREATE_NEVER" doc:"CREATE_IF_NEEDED (default) creates a missing table from the rows' schema (the dataset must exist); CREATE_NEVER fails when it is missing."`
	WriteDisposition           string                   `yaml:"write_disposition" enum:"WRITE_APPEND,WRITE_EMPTY,WRITE_TRUNCATE" doc:"WRITE_APPEND (default) appends; WRITE_EMPTY fails, on the first run, when the table holds rows. WRITE_TRUNCATE is refused: a streaming pipeline cannot replace a table."`
	NumStreams                 int                      `yaml:"num_streams" doc:"How many write streams the lanes share (default: one per lane)."`
	TriggeringFrequencySeconds component.Duration       `yaml:"triggering_frequency_seconds" doc:"How often to commit (exactly_once): seconds, or a duration such as 10s. Sets the pipeline's epoch length (the shortest of all sinks wins). Each commit creates a stream per lane, and BigQuery limits stream creation per project (10,000 an hour in a region), so the default is 5s."`
	ClusteringFields           []string                 `yaml:"clustering_fields" doc:"Clustering of a new table: up to 4 column names."`
	TimePartitioning           *TimePartitioning        `yaml:"time_partitioning" doc:"Time partitioning of a new table."`
	ErrorHandling              *component.ErrorHandling `yaml:"error_handling" doc:"Send rows that cannot be encoded for the table or that BigQuery rejects to this output as {failed_row, error_message, source} instead of stopping the pipeline."`
	CredentialsFile            string                   `yaml:"credentials_file" doc:"sluice adds: a service account key file; default: Application Default Credentials."`
	Endpoint                   string                   `yaml:"endpoint" doc:"sluice adds: the BigQuery REST endpoint (for emulators and tests), e.g. http://127.0.0.1:9050. Connects without credentials."`
	StorageEndpoint            string                   `yaml:"storage_endpoint" doc:"sluice adds: the Storage Write API endpoint as host:port (for emulators and tests). Connects without credentials or TLS."`
	SourcePositionColumns      bool                     `yaml:"source_position_columns" doc:"sluice adds: write where each row was read into three more columns, sluice_source (STRING), sluice_partition and sluice_offset (INT64). A commit interrupted so long ago that BigQuery no longer knows its streams is then decided by counting its rows instead of by the operator, and at_least_once readers can drop a replay's duplicates by them."`
	CheckpointDir              string                   `yaml:"checkpoint_dir" doc:"sluice adds: keep the sink's checkpoint and commit intent in files in this directory, fsynced, on a persistent volume. By default they are kept in the topic __sluice_checkpoints of the Kafka source's cluster, or without a Kafka source in .sluice/bigquery (relative to the working directory): see docs/bigquery.md."`
}

// TimePartitioning is the time partitioning of a new table.
type TimePartitioning struct {
	Type  string `yaml:"type" enum:"HOUR,DAY,MONTH,YEAR" doc:"The partition's span (default DAY)."`
	Field string `yaml:"field" doc:"The TIMESTAMP or DATE column; default: ingestion time."`
}

// tableRef names a table.
type tableRef struct{ project, dataset, table string }

func (t tableRef) String() string { return t.project + "." + t.dataset + "." + t.table }

// parent is the table's resource name in the Storage Write API.
func (t tableRef) parent() string {
	return fmt.Sprintf("projects/%s/datasets/%s/tables/%s", t.project, t.dataset, t.table)
}

// Compiled when first used, not at every command's start (docs/operations.md, "Start-up").
var (
	datasetOrTable = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[\p{L}\p{M}\p{N}\p{Pc}\p{Pd}\p{Zs}$]+$`) })
	projectID      = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^([a-z][a-z0-9.\-]*:)?[a-z][a-z0-9\-]{4,28}[a-z0-9]$`)
	})
)

// parseTable reads project:dataset.table or project.dataset.table.
func parseTable(s string) (tableRef, error) {
	var t tableRef
	rest := s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		t.project, rest = s[:i], s[i+1:]
		parts := strings.Split(rest, ".")
		if len(parts) != 2 {
			return t, fmt.Errorf("table %q: write project:dataset.table or project.dataset.table", s)
		}
		t.dataset, t.table = parts[0], parts[1]
	} else {
		parts := strings.Split(s, ".")
		if len(parts) != 3 {
			return t, fmt.Errorf("table %q: write project:dataset.table or project.dataset.table (the project cannot be left out)", s)
		}
		t.project, t.dataset, t.table = parts[0], parts[1], parts[2]
	}
	switch {
	case !projectID().MatchString(t.project):
		return t, fmt.Errorf("table %q: %q is not a project id (6 to 30 lower-case letters, digits and hyphens, starting with a letter)", s, t.project)
	case t.dataset == "" || len(t.dataset) > 1024 || !datasetOrTable().MatchString(t.dataset) || strings.ContainsAny(t.dataset, " -$"):
		return t, fmt.Errorf("table %q: %q is not a dataset name (letters, digits and underscores)", s, t.dataset)
	case t.table == "" || len(t.table) > 1024 || !datasetOrTable().MatchString(t.table):
		return t, fmt.Errorf("table %q: %q is not a table name", s, t.table)
	}
	return t, nil
}

// plan is what building WriteToBigQuery decides.
type plan struct {
	cfg    WriteConfig
	name   string // the sink's name in the pipeline: its state file's
	ref    tableRef
	input  *schemas.Schema // the rows' schema
	stored *schemas.Schema // the table's: input, with source_position_columns the position columns
	errOut *component.ErrorOutput
	// exactly: the pipeline's delivery is exactly_once (component.Options.Delivery).
	exactly bool
}

// DefaultTrigger is how often an exactly-once BigQuery sink commits when its config does not
// say.
const DefaultTrigger = 5 * time.Second

func buildWrite(c *component.Context, cfg *WriteConfig) (component.Sink, error) {
	before := len(*c.Diags)
	p := &plan{cfg: *cfg, name: c.Name, input: c.Input(), exactly: c.Options.Delivery != component.AtLeastOnce}
	if p.input == nil {
		return nil, fmt.Errorf("%s needs an input", c.Describe())
	}
	p.stored = p.input
	if cfg.SourcePositionColumns {
		taken := false
		for _, col := range []string{colSource, colPartition, colOffset} {
			if _, ok := fieldFold(p.input, col); ok {
				c.Errorf(c.KeyPos("source_position_columns"), "source_position_columns: the rows already have a field %q; rename it", col)
				taken = true
			}
		}
		if !taken {
			p.stored = withPositions(p.input)
		}
	}
	var err error
	if p.ref, err = parseTable(cfg.Table); err != nil {
		c.Errorf(c.KeyPos("table"), "%v", err)
	}
	if cfg.WriteDisposition == "WRITE_TRUNCATE" {
		c.Errorf(c.KeyPos("write_disposition"), "write_disposition WRITE_TRUNCATE cannot be used by a streaming pipeline: it would replace the table at every commit").
			Detail = "use WRITE_APPEND, or WRITE_EMPTY to insist on an empty table at the first run"
	}
	if cfg.NumStreams < 0 {
		c.Errorf(c.KeyPos("num_streams"), "num_streams must be 1 or more (0: one per lane)")
	}
	switch trig := time.Duration(cfg.TriggeringFrequencySeconds); {
	case trig < 0:
		c.Errorf(c.KeyPos("triggering_frequency_seconds"), "triggering_frequency_seconds must be positive")
	case trig > 0:
		c.SetTrigger(trig)
	case p.exactly:
		c.SetTrigger(DefaultTrigger)
	}
	if len(cfg.ClusteringFields) > 4 {
		c.Errorf(c.KeyPos("clustering_fields"), "clustering_fields: BigQuery clusters by at most 4 columns, not %d", len(cfg.ClusteringFields))
	}
	for _, f := range cfg.ClusteringFields {
		if _, ok := fieldFold(p.stored, f); !ok {
			c.Errorf(c.KeyPos("clustering_fields"), "clustering_fields: the rows have no field %q (fields: %s)", f, strings.Join(p.stored.Names(), ", "))
		}
	}
	if tp := cfg.TimePartitioning; tp != nil && tp.Field != "" {
		if f, ok := fieldFold(p.input, tp.Field); !ok {
			c.Errorf(c.KeyPos("time_partitioning"), "time_partitioning: the rows have no field %q", tp.Field)
		} else if f.Type.Kind != schemas.Timestamp && f.Type.Kind != schemas.Date {
			c.Errorf(c.KeyPos("time_partitioning"), "time_partitioning: field %q is %s; BigQuery partitions by a TIMESTAMP or DATE column", tp.Field, f.Type)
		}
	}
	if cfg.CredentialsFile != "" && cfg.Endpoint == "" {
		if _, err := os.Stat(cfg.CredentialsFile); err != nil {
			c.Errorf(c.KeyPos("credentials_file"), "credentials_file: %v", err)
		}
	}
	if cfg.CreateDisposition != "CREATE_NEVER" {
		if _, err := tableSchemaFor(p.stored); err != nil {
			c.Errorf(c.Pos, "%s: the rows cannot become a BigQuery table: %v", c.Describe(), err)
		}
	}
	p.errOut = c.ErrorOutput(cfg.ErrorHandling, p.input, component.IOShape)
	if len(*c.Diags) > before {
		return nil, nil
	}
	return newSink(c.Describe(), p), nil
}

// fieldFold finds the field of s named name, ignoring case as BigQuery does.
func fieldFold(s *schemas.Schema, name string) (schemas.Field, bool) {
	for _, f := range s.Fields {
		if strings.EqualFold(f.Name, name) {
			return f, true
		}
	}
	return schemas.Field{}, false
}
