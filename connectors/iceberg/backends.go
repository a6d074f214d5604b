package iceberg

// The catalogs and storage sluice can use besides the SQL catalog on SQLite and local files:
// iceberg-go registers each when its package is imported (docs/iceberg.md, "Catalogs").
import (
	_ "github.com/apache/iceberg-go/catalog/glue"     // type: glue
	_ "github.com/apache/iceberg-go/catalog/hive"     // type: hive
	_ "github.com/apache/iceberg-go/catalog/rest"     // type: rest
	_ "github.com/apache/iceberg-go/io/gocloud/azure" // abfs://, wasb://
	_ "github.com/apache/iceberg-go/io/gocloud/gcs"   // gs://
	_ "github.com/apache/iceberg-go/io/gocloud/s3"    // s3://, s3a://
	_ "github.com/jackc/pgx/v5/stdlib"                // sql.driver: pgx (a SQL catalog on PostgreSQL)
)
