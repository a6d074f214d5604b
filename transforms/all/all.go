// Package all registers every transform of sluice; import it for its side effects.
package all

import (
	_ "github.com/sluicehq/sluice/transforms/combine"    // Combine, GroupByKey
	_ "github.com/sluicehq/sluice/transforms/javascript" // language: javascript (goja)
	_ "github.com/sluicehq/sluice/transforms/join"       // Join
	_ "github.com/sluicehq/sluice/transforms/mapping"    // MapToFields, Filter, Explode, Flatten, Partition, LogForTesting, AssignTimestamps, AssertEqual
	_ "github.com/sluicehq/sluice/transforms/python"     // language: python beyond expr-lang (Starlark)
	_ "github.com/sluicehq/sluice/transforms/sql"        // Sql, language: sql
)
