package main

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// countingListener accepts TCP connections on loopback and counts them: the stand-in for
// every service a pipeline names, so that a test can say whether anything dialled it.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func listenCounting(t *testing.T) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &countingListener{Listener: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return l
}

// treeState lists every path under dir with its type, size and modification time.
func treeState(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%v %d %v", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sideEffectPipelines are pipelines whose components name services: an Iceberg table in a
// SQLite catalog under a relative warehouse (also one named by an unrendered Jinja variable,
// as Beam's examples do), a REST catalog, Kafka, BigQuery and a schema registry. addr is the
// address of the services.
func sideEffectPipelines(addr string) map[string]string {
	kafka := fmt.Sprintf(`
    - type: ReadFromKafka
      name: orders
      config:
        bootstrap_servers: %s
        topic: orders
        format: JSON
        schema: {type: object, properties: {id: {type: integer}, amount: {type: number}}}
`, addr)
	return map[string]string{
		"iceberg_sql.yaml": `pipeline:
  transforms:
    - type: ReadFromIceberg
      name: events
      config:
        table: db.events
        catalog_properties: {type: sql, warehouse: ./warehouse}
    - type: Filter
      input: events
      config: {language: python, keep: "amount > 10"}
    - type: WriteToIceberg
      input: Filter
      config:
        table: db.big
        catalog_properties: {type: sql, warehouse: "{{ WAREHOUSE }}"}
`,
		"iceberg_rest.yaml": fmt.Sprintf(`pipeline:
  transforms:
    - type: ReadFromIcebergCDC
      name: events
      config:
        table: db.events
        catalog_properties: {type: rest, uri: "http://%s"}
    - type: WriteToIceberg
      input: events
      config:
        table: db.copy
        catalog_properties: {type: rest, uri: "http://%s"}
`, addr, addr),
		"kafka.yaml": "pipeline:\n  transforms:" + kafka + fmt.Sprintf(`    - type: WriteToKafka
      input: orders
      config: {bootstrap_servers: "%s", topic: out, format: JSON}
`, addr),
		"bigquery.yaml": "pipeline:\n  transforms:" + kafka + fmt.Sprintf(`    - type: WriteToBigQuery
      input: orders
      config:
        table: my-project:shop.orders
        endpoint: http://%s/bigquery/v2/
        storage_endpoint: %s
        checkpoint_dir: ./bq-state
`, addr, addr),
		"registry.yaml": fmt.Sprintf(`pipeline:
  transforms:
    - type: ReadFromKafka
      name: orders
      config:
        bootstrap_servers: %s
        topic: orders
        format: AVRO
        confluent_schema_registry_url: http://%s
    - type: MapToFields
      input: orders
      config: {language: python, append: true, fields: {big: "amount > 10"}}
    - type: WriteToKafka
      input: MapToFields
      config:
        bootstrap_servers: %s
        topic: out
        format: AVRO
        confluent_schema_registry_url: http://%s
`, addr, addr, addr, addr),
	}
}

// TestCheckingHasNoSideEffects runs validate, graph, render, diff and fmt --check on pipelines
// that name services, in a directory that must not change, with every service at a listener
// that must accept no connection. validate --check-services is the one that asks them.
func TestCheckingHasNoSideEffects(t *testing.T) {
	ln := listenCounting(t)
	dir := t.TempDir()
	for name, src := range sideEffectPipelines(ln.Addr().String()) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, 0o555); err != nil { // root writes anyway: the tree is compared
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	before := treeState(t, dir)
	t.Chdir(dir) // the pipelines' relative paths are the directory's
	for name := range sideEffectPipelines("") {
		for _, args := range [][]string{
			{"validate", name}, {"graph", name}, {"graph", "--format", "mermaid", name},
			{"render", name}, {"diff", name, name}, {"fmt", "--check", name},
		} {
			code, out, errOut := sluice(t, args...)
			if code != exitOK && args[0] != "fmt" { // fmt --check exits 1 on a file it would change
				t.Errorf("sluice %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
			}
			if n := ln.accepted.Load(); n > 0 {
				t.Fatalf("sluice %s connected to the services %d times:\n%s%s", strings.Join(args, " "), n, out, errOut)
			}
			if args[0] != "validate" {
				continue
			}
			for file, note := range map[string]string{"iceberg": "comes from the catalog of table db.events", "registry": `comes from subject "orders-value" of the schema registry`} {
				if strings.Contains(name, file) != strings.Contains(errOut, note) {
					t.Errorf("sluice validate %s does not say what it left unchecked:\n%s", name, errOut)
				}
			}
		}
	}
	after := treeState(t, dir)
	for path, was := range before {
		if after[path] != was {
			t.Errorf("%s changed: %s, was %s", path, after[path], was)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			t.Errorf("%s was created", path)
		}
	}

	// --check-services asks them.
	for _, name := range []string{"iceberg_rest.yaml", "registry.yaml"} {
		before := ln.accepted.Load()
		code, out, errOut := sluice(t, "validate", "--check-services", name)
		if code != exitInvalid || ln.accepted.Load() == before {
			t.Errorf("validate --check-services %s did not ask the service (exit %d, %d connections):\n%s%s", name, code, ln.accepted.Load()-before, out, errOut)
		}
	}
}
