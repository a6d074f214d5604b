// Command sluice runs declarative YAML streaming pipelines. See README.md.
package main

import (
	"os"

	_ "github.com/sluicehq/sluice/connectors/all"
	_ "github.com/sluicehq/sluice/transforms/all"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
