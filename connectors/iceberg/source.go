package iceberg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
	"gopkg.in/yaml.v3"
)

func init() {
	component.RegisterSource("ReadFromIceberg",
		"Reads the rows of an Apache Iceberg table's current snapshot (a bounded source), with column selection and a row filter.",
		buildRead)
	component.RegisterSource("ReadFromIcebergCDC",
		"Streams the rows appended to an Apache Iceberg table, snapshot by snapshot, polling for new snapshots.",
		buildCDC)
}

// ReadConfig is the config of ReadFromIceberg.
type ReadConfig struct {
	Table             string            `yaml:"table" required:"true" doc:"The table, as namespace.name (db.events)."`
	CatalogName       string            `yaml:"catalog_name" doc:"The catalog's name (default sluice)."`
	CatalogProperties map[string]string `yaml:"catalog_properties" doc:"Properties of the catalog, as for WriteToIceberg (default: a SQLite catalog with a local warehouse in ./warehouse)."`
	ConfigProperties  map[string]string `yaml:"config_properties" doc:"Storage properties (s3.*, gcs.*, ...), passed to the catalog under catalog_properties."`
	Keep              []string          `yaml:"keep" doc:"Read only these columns."`
	Drop              []string          `yaml:"drop" doc:"Read every column but these."`
	Filter            *component.Expr   `yaml:"filter" doc:"Keep only the rows for which this boolean expression over the table's columns is true (expr-lang, as Filter; SQL's AND, OR, NOT, =, <> and IS [NOT] NULL are accepted too)."`
	Schema            *yaml.Node        `yaml:"schema" doc:"sluice adds: the JSON Schema of the rows, for a table that may not exist yet when the pipeline is validated; the table's columns are checked against it when the pipeline starts."`
}

// CDCConfig is the config of ReadFromIcebergCDC.
type CDCConfig struct {
	Table               string             `yaml:"table" required:"true" doc:"The table, as namespace.name (db.events)."`
	CatalogName         string             `yaml:"catalog_name" doc:"The catalog's name (default sluice)."`
	CatalogProperties   map[string]string  `yaml:"catalog_properties" doc:"Properties of the catalog, as for WriteToIceberg."`
	ConfigProperties    map[string]string  `yaml:"config_properties" doc:"Storage properties (s3.*, gcs.*, ...), passed to the catalog under catalog_properties."`
	Keep                []string           `yaml:"keep" doc:"Read only these columns."`
	Drop                []string           `yaml:"drop" doc:"Read every column but these."`
	Filter              *component.Expr    `yaml:"filter" doc:"Keep only the rows for which this boolean expression over the table's columns is true."`
	Schema              *yaml.Node         `yaml:"schema" doc:"sluice adds: the JSON Schema of the table's rows, for a table that does not exist yet when the pipeline is validated; the source waits for it."`
	PollIntervalSeconds component.Duration `yaml:"poll_interval_seconds" doc:"How often to look for new snapshots when streaming: seconds, or a duration such as 500ms (default 60)."`
	Streaming           bool               `yaml:"streaming" doc:"Keep polling for new snapshots forever (default false: stop at the snapshot that is current when the pipeline starts)."`
	FromSnapshot        *int64             `yaml:"from_snapshot" doc:"Start at this snapshot id (inclusive)."`
	ToSnapshot          *int64             `yaml:"to_snapshot" doc:"End at this snapshot id (inclusive)."`
	FromTimestamp       *int64             `yaml:"from_timestamp" doc:"Start at the first snapshot committed at or after this time (milliseconds since the Unix epoch)."`
	ToTimestamp         *int64             `yaml:"to_timestamp" doc:"End at the last snapshot committed at or before this time (milliseconds since the Unix epoch)."`
	StartingStrategy    string             `yaml:"starting_strategy" enum:"earliest,latest" doc:"Where to start without a checkpoint, from_snapshot or from_timestamp: earliest (the table's first snapshot) or latest (only snapshots committed after the start). Default: earliest, or latest when streaming, as in Beam."`
}

// DefaultPollInterval is how often ReadFromIcebergCDC polls when poll_interval_seconds is unset.
const DefaultPollInterval = component.Duration(60e9)

// common is what both sources share: the table, its catalog, the columns and the filter.
type common struct {
	Table                               string
	CatalogName                         string
	CatalogProperties, ConfigProperties map[string]string
	Keep, Drop                          []string
	Filter                              *component.Expr
	Schema                              *yaml.Node
}

// readPlan is what building a read source decides: which columns to read and how rows
// become the source's output.
type readPlan struct {
	what   string // the component, for messages
	table  string
	ident  table.Identifier
	cat    *WriteConfig // catalog_name and properties, in the form openCatalog takes
	read   *schemas.Schema
	out    *schemas.Schema
	pick   []int // per output field, its index in read; nil when out is read
	filter component.RowFunc
}

func buildRead(c *component.Context, cfg *ReadConfig) (component.Source, error) {
	p := planRead(c, common{cfg.Table, cfg.CatalogName, cfg.CatalogProperties, cfg.ConfigProperties, cfg.Keep, cfg.Drop, cfg.Filter, cfg.Schema})
	if p == nil {
		return nil, nil
	}
	return &scanSource{tableReader: tableReader{plan: p}, source: "iceberg:" + cfg.Table}, nil
}

// planRead checks the config shared by both sources, loads the table's schema (or takes the
// given one when the table does not exist) and declares the output; nil when it has errors.
func planRead(c *component.Context, cfg common) *readPlan {
	before := len(*c.Diags)
	p := &readPlan{what: c.Describe(), table: cfg.Table,
		cat: &WriteConfig{CatalogName: cfg.CatalogName, CatalogProperties: cfg.CatalogProperties, ConfigProperties: cfg.ConfigProperties}}
	ident, err := identifier(cfg.Table)
	if err != nil {
		c.Errorf(c.KeyPos("table"), "%v", err)
		return nil
	}
	p.ident = ident
	if _, err := catalogProps(p.cat); err != nil {
		c.Errorf(c.KeyPos("catalog_properties"), "%v", err)
	}
	if cfg.Keep != nil && cfg.Drop != nil {
		c.Errorf(c.Pos, "%s: keep and drop exclude each other; use one", c.Describe())
	}
	var given *schemas.Schema
	if cfg.Schema != nil {
		if given, err = schemas.ParseJSONSchema(cfg.Schema); err != nil {
			pos := c.KeyPos("schema")
			if se, ok := errors.AsType[*schemas.SchemaError](err); ok && se.Line > 0 {
				pos.Line, pos.Col = se.Line, se.Column
			}
			c.Errorf(pos, "%s: %v", c.Describe(), err)
		}
	}
	if len(*c.Diags) > before {
		return nil
	}
	// With a schema, validating the pipeline does no I/O: the table is checked when the
	// source opens. Without one, the table gives it, unless the pipeline is only checked
	// offline: then the catalog is not asked, and the columns are checked when it runs.
	all, skipped := given, map[string]error(nil)
	if given == nil && c.Offline {
		c.OutputFromService(component.Main, "the catalog of table "+cfg.Table)
		return p
	}
	if given == nil {
		all, skipped, err = p.tableRows(context.Background())
		switch {
		case errors.Is(err, catalog.ErrNoSuchTable):
			c.Errorf(c.KeyPos("table"), "%s: table %s does not exist", c.Describe(), cfg.Table).Detail =
				"create it first, or give its rows' JSON Schema as config key \"schema\" to start before it exists"
			return nil
		case err != nil:
			c.Errorf(c.KeyPos("table"), "%s: %v", c.Describe(), err)
			return nil
		}
	}
	if !p.columns(c, cfg, all, skipped) {
		return nil
	}
	if cfg.Filter != nil && !p.compileFilter(c, *cfg.Filter) {
		return nil
	}
	c.Output(component.Main, p.out)
	return p
}

// tableRows loads the table and returns its rows' schema and the columns sluice cannot read.
func (p *readPlan) tableRows(ctx context.Context) (*schemas.Schema, map[string]error, error) {
	props, err := catalogProps(p.cat)
	if err != nil {
		return nil, nil, err
	}
	if db := sqliteFile(props); db != "" {
		// Checking the table creates no catalog: a missing file holds no table.
		if _, err := os.Stat(db); errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("load table %s: the catalog %s does not exist: %w", p.table, db, catalog.ErrNoSuchTable)
		}
	}
	cat, err := loadCatalog(ctx, p.cat.CatalogName, props)
	if err != nil {
		return nil, nil, err
	}
	defer closeCatalog(cat)
	tbl, err := cat.LoadTable(ctx, p.ident)
	if err != nil {
		return nil, nil, fmt.Errorf("load table %s: %w", p.table, err)
	}
	rows, skipped := rowSchema(tbl.Schema())
	return rows, skipped, nil
}

// columns sets the output (keep or drop over the table's columns) and the columns to read:
// the output's, or every column when a filter may look at the others.
func (p *readPlan) columns(c *component.Context, cfg common, all *schemas.Schema, skipped map[string]error) bool {
	key, list := "keep", cfg.Keep
	if cfg.Drop != nil {
		key, list = "drop", cfg.Drop
	}
	named := map[string]bool{}
	ok := true
	for i, n := range list {
		if _, found := all.Index(n); !found && skipped[n] == nil {
			c.Errorf(listItemPos(c, key, i), "%s: no column %q in table %s%s", key, n, cfg.Table, diag.DidYouMean(n, all.Names()))
			ok = false
		}
		named[n] = true
	}
	picked := func(name string) bool { return list == nil || named[name] == (key == "keep") }
	for name, err := range skipped {
		if picked(name) {
			c.Errorf(c.KeyPos("table"), "%s: %v", c.Describe(), err)
			ok = false
		}
	}
	var fields []schemas.Field
	for _, f := range all.Fields {
		if picked(f.Name) {
			fields = append(fields, f)
		}
	}
	if ok && len(fields) == 0 {
		c.Errorf(c.KeyPos(key), "%s leaves no column to read", key)
		ok = false
	}
	if !ok {
		return false
	}
	p.out, p.read = schemas.New(fields...), schemas.New(fields...)
	if cfg.Filter != nil && len(fields) < len(all.Fields) {
		p.read = all
		for _, f := range fields {
			i, _ := all.Index(f.Name)
			p.pick = append(p.pick, i)
		}
	}
	return true
}

// compileFilter compiles the filter against the columns read; SQL's spelling of the boolean
// operators (Beam's filter is SQL) is rewritten when the text does not compile as it is.
func (p *readPlan) compileFilter(c *component.Context, e component.Expr) bool {
	if c.Exprs == nil {
		c.Errorf(c.KeyPos("filter"), "%s: filter expressions are not available here", c.Describe())
		return false
	}
	fn, typ, err := c.Exprs.Compile(e, p.read, "")
	if err != nil {
		if sql, changed := fromSQL(e.Text); changed {
			alt := e
			alt.Text = sql
			if fn2, typ2, err2 := c.Exprs.Compile(alt, p.read, ""); err2 == nil {
				fn, typ, err = fn2, typ2, nil
			}
		}
	}
	if err != nil {
		c.Diags.Append(e.Pos, err)
		return false
	}
	if typ.Kind != schemas.Bool && typ.Kind != schemas.Any {
		c.Errorf(c.KeyPos("filter"), "%s: filter must be a boolean expression, but %q gives %s", c.Describe(), e.Text, typ)
		return false
	}
	p.filter = fn
	return true
}

// decode applies the filter and the column selection to rows read, keeping positions and
// times, and emits what is left.
func (p *readPlan) decode(b *schemas.Batch, emit component.Emit) error {
	if p.filter == nil && p.pick == nil {
		return emit(component.Main, &schemas.Batch{Schema: p.out, Rows: b.Rows, Pos: b.Pos, Time: b.Time})
	}
	out := &schemas.Batch{Schema: p.out, Rows: make([]schemas.Row, 0, len(b.Rows)), Pos: make([]schemas.Position, 0, len(b.Rows))}
	for i, row := range b.Rows {
		if p.filter != nil {
			v, err := p.filter(row)
			if err != nil {
				return fmt.Errorf("%s: filter on the row at %s: %w", p.what, b.Pos[i], err)
			}
			keep, isBool := v.(bool)
			if !isBool {
				return fmt.Errorf("%s: filter gives %v, not a boolean, for the row at %s", p.what, v, b.Pos[i])
			}
			if !keep {
				continue
			}
		}
		if p.pick != nil {
			r := make(schemas.Row, len(p.pick))
			for k, j := range p.pick {
				r[k] = row[j]
			}
			row = r
		}
		out.Rows, out.Pos = append(out.Rows, row), append(out.Pos, b.Pos[i])
		if i < len(b.Time) {
			out.Time = append(out.Time, b.Time[i])
		}
	}
	if len(out.Rows) == 0 {
		return nil
	}
	return emit(component.Main, out)
}

// open loads the table for reading and checks that its rows still match the plan.
func (p *readPlan) open(ctx context.Context) (catalog.Catalog, *table.Table, error) {
	cat, err := openCatalog(ctx, p.cat)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := p.load(ctx, cat)
	if err != nil {
		_ = closeCatalog(cat)
		return nil, nil, err
	}
	return cat, tbl, nil
}

// load loads the table and checks that it has the columns the plan reads.
func (p *readPlan) load(ctx context.Context, cat catalog.Catalog) (*table.Table, error) {
	tbl, err := cat.LoadTable(ctx, p.ident)
	if err != nil {
		return nil, fmt.Errorf("load table %s: %w", p.table, err)
	}
	rows, _ := rowSchema(tbl.Schema())
	if err := sameRows(p.read, rows); err != nil {
		return nil, fmt.Errorf("table %s does not have the columns the pipeline reads: %w", p.table, err)
	}
	return tbl, nil
}

// selected returns the names of the columns read, for the scan's projection.
func (p *readPlan) selected() []string { return p.read.Names() }

// fromSQL rewrites SQL's boolean operators into expr-lang's outside string literals: AND, OR,
// NOT, = (as ==), <> (as !=), IS NULL and IS NOT NULL. It reports whether it changed anything.
func fromSQL(s string) (string, bool) {
	var b strings.Builder
	changed := false
	for i := 0; i < len(s); {
		ch := s[i]
		switch {
		case ch == '\'' || ch == '"':
			j := i + 1
			for j < len(s) && s[j] != ch {
				j++
			}
			b.WriteString(s[i:min(j+1, len(s))])
			i = j + 1
			continue
		case ch == '<' && i+1 < len(s) && s[i+1] == '>':
			b.WriteString("!=")
			i, changed = i+2, true
			continue
		case ch == '=' && (i == 0 || !strings.ContainsRune("=!<>", rune(s[i-1]))) && (i+1 == len(s) || s[i+1] != '='):
			b.WriteString("==")
			i, changed = i+1, true
			continue
		case isWordChar(ch) && (i == 0 || !isWordChar(s[i-1])):
			j := i
			for j < len(s) && isWordChar(s[j]) {
				j++
			}
			w := s[i:j]
			switch strings.ToUpper(w) {
			case "AND", "OR", "NOT":
				b.WriteString(strings.ToLower(w))
				changed = changed || w != strings.ToLower(w)
			case "IS":
				rest := strings.Fields(strings.ToUpper(s[j:]))
				if len(rest) >= 2 && rest[0] == "NOT" && strings.HasPrefix(rest[1], "NULL") {
					b.WriteString("!= nil")
					j += strings.Index(strings.ToUpper(s[j:]), "NULL") + 4
					changed = true
				} else if len(rest) >= 1 && strings.HasPrefix(rest[0], "NULL") {
					b.WriteString("== nil")
					j += strings.Index(strings.ToUpper(s[j:]), "NULL") + 4
					changed = true
				} else {
					b.WriteString(w)
				}
			default:
				b.WriteString(w)
			}
			i = j
			continue
		}
		b.WriteByte(ch)
		i++
	}
	return b.String(), changed
}

func isWordChar(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
