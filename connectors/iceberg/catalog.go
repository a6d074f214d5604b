package iceberg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/sql" // type: sql
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/internal/secret"
	_ "modernc.org/sqlite" // the SQLite driver of the default catalog
)

// DefaultWarehouse is the directory, relative to the working directory, of the catalog and
// tables when catalog_properties is empty.
const DefaultWarehouse = "warehouse"

// sqliteParams make several connections (and processes) share a catalog file: WAL lets readers
// run beside the writer, and a writer waits for the lock instead of failing at once.
const sqliteParams = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"

// catalogProps returns the properties to load the catalog with: config_properties, then
// catalog_properties over them, with a local SQLite catalog filled in where they are silent
// (docs/iceberg.md).
func catalogProps(cfg *WriteConfig) (iceberg.Properties, error) {
	p := iceberg.Properties{}
	maps.Copy(p, cfg.ConfigProperties)
	maps.Copy(p, cfg.CatalogProperties)
	for k, v := range p {
		if secret.HasRef(v) { // credentials as ${env:NAME} or ${file:PATH}
			value, _, err := secret.Expand(v)
			if err != nil {
				return nil, fmt.Errorf("catalog property %q: %w", k, err)
			}
			p[k] = value
		}
	}
	typ := strings.ToLower(p["type"])
	if typ == "" && p["uri"] == "" {
		typ = "sql"
		if p["warehouse"] == "" {
			p["warehouse"] = DefaultWarehouse
		}
	}
	if typ == string(catalog.Hadoop) {
		return hadoopProps(p)
	}
	if typ != "sql" {
		if typ != "" {
			p["type"] = typ // iceberg-go's registry is case-sensitive
		}
		return p, checkCatalogType(typ)
	}
	p["type"] = "sql"
	if p["sql.driver"] != "" && p["sql.driver"] != "sqlite" {
		return p, nil // another database: passed through as given
	}
	wh, err := localWarehouse(p["warehouse"])
	if err != nil {
		return nil, err
	}
	dbPath := p["uri"]
	if dbPath == "" {
		if wh == "" {
			return nil, errors.New("catalog_properties: a sql catalog needs a uri (the catalog database) or a warehouse")
		}
		dbPath = filepath.Join(wh, "catalog.db")
	}
	dsn, err := sqliteDSN(dbPath)
	if err != nil {
		return nil, err
	}
	p["uri"], p["sql.driver"], p["sql.dialect"] = dsn, "sqlite", "sqlite"
	if wh != "" {
		p["warehouse"] = (&url.URL{Scheme: "file", Path: filepath.ToSlash(wh)}).String()
	}
	return p, nil
}

// localWarehouse returns the absolute directory of a local warehouse ("" for a remote one or
// none). openCatalog creates it; validating a pipeline creates nothing.
func localWarehouse(wh string) (string, error) {
	if wh == "" || (strings.Contains(wh, "://") && !strings.HasPrefix(wh, "file://")) {
		return "", nil
	}
	dir, err := filepath.Abs(strings.TrimPrefix(wh, "file://"))
	if err != nil {
		return "", fmt.Errorf("warehouse %s: %w", wh, err)
	}
	return dir, nil
}

// sqliteDSN turns a catalog uri (a path, file:path, sqlite:///path as SQLAlchemy writes it) into
// the driver's DSN, adding sqliteParams unless the uri sets pragmas itself.
func sqliteDSN(uri string) (string, error) {
	path, query, _ := strings.Cut(uri, "?")
	for _, prefix := range []string{"sqlite:///", "sqlite://", "sqlite:", "file://", "file:"} {
		if strings.HasPrefix(path, prefix) {
			path = strings.TrimPrefix(path, prefix)
			if prefix == "sqlite:///" && !filepath.IsAbs(path) {
				path = "/" + path
			}
			break
		}
	}
	if path != ":memory:" {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", fmt.Errorf("catalog uri %s: %w", uri, err)
		}
		path = abs
	}
	if !strings.Contains(query, "_pragma") {
		query = strings.TrimPrefix(query+"&"+sqliteParams, "&")
	}
	return "file:" + path + "?" + query, nil
}

// identifier splits "db.events" into its namespace and name.
func identifier(name string) (table.Identifier, error) {
	parts := strings.Split(name, ".")
	for _, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("table %q: want namespace.table, as db.events", name)
		}
	}
	if len(parts) < 2 {
		return nil, fmt.Errorf("table %q: want namespace.table, as db.events", name)
	}
	return parts, nil
}

// openCatalog loads the catalog of cfg.
func openCatalog(ctx context.Context, cfg *WriteConfig) (catalog.Catalog, error) {
	props, err := catalogProps(cfg)
	if err != nil {
		return nil, err
	}
	if err := makeLocalDirs(props); err != nil {
		return nil, err
	}
	return loadCatalog(ctx, cfg.CatalogName, props)
}

// catalogAddress says, for messages, which service a catalog is: its type, and for a REST
// catalog its URI (other catalogs' URIs, such as a SQL catalog's DSN, may hold a password).
func catalogAddress(props iceberg.Properties) string {
	switch typ := props["type"]; {
	case typ == "rest" && props["uri"] != "":
		return " (REST catalog at " + props["uri"] + ")"
	case typ != "":
		return " (" + typ + " catalog)"
	}
	return ""
}

// loadCatalog loads the catalog named name (default sluice) with props as catalogProps
// returns them, creating no directory.
func loadCatalog(ctx context.Context, name string, props iceberg.Properties) (catalog.Catalog, error) {
	if name == "" {
		name = "sluice"
	}
	cat, err := catalog.Load(ctx, name, props)
	if err != nil {
		return nil, fmt.Errorf("open Iceberg catalog %s%s: %w", name, catalogAddress(props), diskError(err, sqliteFile(props)))
	}
	return cat, nil
}

// sqliteFile returns the file of a local SQLite catalog, or "" for another catalog.
func sqliteFile(p iceberg.Properties) string {
	if p["sql.driver"] != "sqlite" {
		return ""
	}
	path, _, _ := strings.Cut(strings.TrimPrefix(p["uri"], "file:"), "?")
	if path == ":memory:" {
		return ""
	}
	return path
}

// makeLocalDirs creates the directories of a local SQLite catalog and warehouse.
func makeLocalDirs(p iceberg.Properties) error {
	if path := sqliteFile(p); path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("create the catalog directory: %w", err)
		}
	}
	if wh, ok := strings.CutPrefix(p["warehouse"], "file://"); ok {
		if err := os.MkdirAll(filepath.FromSlash(wh), 0o755); err != nil {
			return fmt.Errorf("create the warehouse directory: %w", err)
		}
	}
	return nil
}

// closeCatalog releases the catalog's connections, if it holds any.
func closeCatalog(cat catalog.Catalog) error {
	if c, ok := cat.(catalog.Closer); ok {
		return c.Close()
	}
	return nil
}

// loadOrCreate loads the table, creating it (and its namespace) from the plan when missing.
func loadOrCreate(ctx context.Context, cat catalog.Catalog, ident table.Identifier, p *plan) (*table.Table, bool, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if err == nil {
		return tbl, false, nil
	}
	if !errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, false, fmt.Errorf("load table %s: %w", strings.Join(ident, "."), err)
	}
	ns := catalog.NamespaceFromIdent(ident)
	if err := cat.CreateNamespace(ctx, ns, nil); err != nil && !errors.Is(err, catalog.ErrNamespaceAlreadyExists) {
		return nil, false, fmt.Errorf("create namespace %s: %w", strings.Join(ns, "."), err)
	}
	tbl, err = cat.CreateTable(ctx, ident, p.schema, catalog.WithPartitionSpec(&p.spec), catalog.WithProperties(p.tableProps))
	if errors.Is(err, catalog.ErrTableAlreadyExists) { // another process was faster
		tbl, err = cat.LoadTable(ctx, ident)
	}
	if err != nil {
		return nil, false, fmt.Errorf("create table %s: %w", strings.Join(ident, "."), err)
	}
	return tbl, true, nil
}
