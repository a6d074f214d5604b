package iceberg

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/hadoop" // type: hadoop
)

// hadoopProps checks and completes the properties of a Hadoop (file-system) catalog: the
// tables live under the warehouse directory, and a commit publishes the table's next
// metadata/vN.metadata.json by an exclusive create (iceberg-go's catalog/hadoop, following
// the Iceberg spec), which only a local file system makes atomic. The sink's exactly-once
// commit rests on that atomicity, so a remote warehouse is refused rather than written
// unsafely (docs/iceberg.md).
func hadoopProps(p iceberg.Properties) (iceberg.Properties, error) {
	p["type"] = string(catalog.Hadoop)
	wh := p["warehouse"]
	if wh == "" {
		return nil, errors.New("catalog_properties: a hadoop catalog needs a warehouse: the directory its tables are in")
	}
	dir, err := localWarehouse(wh)
	if err != nil {
		return nil, err
	}
	if dir == "" {
		scheme, _, _ := strings.Cut(wh, "://")
		return nil, fmt.Errorf("catalog_properties: a hadoop catalog commits atomically only on a local or file:// warehouse, not %s:// "+
			"(it publishes each commit by an exclusive create, which object stores do not have); "+
			"use a rest or sql catalog for a warehouse there", scheme)
	}
	p["warehouse"] = (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir)}).String()
	return p, nil
}

// checkCatalogType returns an error when the catalog type typ is not one sluice has, so that
// validation refuses what opening the catalog would.
func checkCatalogType(typ string) error {
	types := catalog.GetRegisteredCatalogs()
	if typ == "" || slices.Contains(types, typ) {
		return nil
	}
	slices.Sort(types)
	return fmt.Errorf("catalog_properties: unknown catalog type %q: sluice has %s", typ, strings.Join(types, ", "))
}
