package iceberg

import (
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
)

// The catalogs and storage schemes docs/iceberg.md lists are compiled in: a pipeline that
// names them gets a connection, not "unknown catalog type".
func TestBackendsRegistered(t *testing.T) {
	catalogs := catalog.GetRegisteredCatalogs()
	for _, want := range []string{"sql", "rest", "glue", "hive"} {
		if !slices.Contains(catalogs, want) {
			t.Errorf("catalog type %q is not compiled in (have %v)", want, catalogs)
		}
	}
	schemes := icebergio.GetRegisteredSchemes()
	for _, want := range []string{"file", "s3", "gs", "abfs"} {
		if !slices.Contains(schemes, want) {
			t.Errorf("storage scheme %q is not compiled in (have %v)", want, schemes)
		}
	}
}

// Catalog properties may name credentials as ${env:NAME}; a missing variable is a config
// error that names the property, never its value.
func TestCatalogPropertySecrets(t *testing.T) {
	t.Setenv("SLUICE_TEST_ICEBERG_CREDENTIAL", "s3cr3t")
	cfg := &WriteConfig{CatalogProperties: map[string]string{"type": "rest", "uri": "http://127.0.0.1:1", "credential": "${env:SLUICE_TEST_ICEBERG_CREDENTIAL}"}}
	p, err := catalogProps(cfg)
	if err != nil || p["credential"] != "s3cr3t" {
		t.Fatalf("credential %q, %v", p["credential"], err)
	}
	cfg.CatalogProperties["credential"] = "${env:SLUICE_TEST_ICEBERG_UNSET}"
	if _, err := catalogProps(cfg); err == nil || !strings.Contains(err.Error(), `catalog property "credential"`) {
		t.Errorf("an unset variable: %v", err)
	}
}
