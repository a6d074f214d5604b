// Package bqfake is a BigQuery Storage Write API server on loopback, with the part of the
// BigQuery v2 REST API that cloud.google.com/go/bigquery needs to create tables and read
// rows back. The exactly-once tests of the BigQuery sink run against it, through the real
// client libraries. It follows the API reference,
// https://cloud.google.com/bigquery/docs/reference/storage/rpc/google.cloud.bigquery.storage.v1,
// and keeps everything in memory.
//
// # Starting and connecting
//
//	srv, err := bqfake.New() // free loopback ports; or Start(ListenConfig{GRPC: ..., HTTP: ...})
//	defer srv.Close()
//	err = srv.CreateTable("proj", "ds", "events", schema) // or bigquery.Client's Table.Create
//	mw, err := managedwriter.NewClient(ctx, "proj", srv.WriteClientOptions()...)
//	bq, err := bigquery.NewClient(ctx, "proj", srv.BigQueryClientOptions()...)
//
// WriteClientOptions are option.WithEndpoint(srv.GRPCAddr()), option.WithoutAuthentication()
// and option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())).
// BigQueryClientOptions are option.WithEndpoint(srv.HTTPURL()+"/bigquery/v2/") and
// option.WithoutAuthentication(); the REST paths are also served without the /bigquery/v2
// prefix.
//
// # Semantics
//
// Streams are PENDING or COMMITTED (CreateWriteStream), or a table's _default stream, which
// exists implicitly. An append at an offset equal to the stream's row count succeeds and
// returns that offset; appends without an offset go to the end; the _default stream takes
// no offsets and returns none. Rows of COMMITTED and _default streams are visible at once;
// rows of a PENDING stream only after FinalizeWriteStream and BatchCommitWriteStreams,
// which commits all its streams or none. Every row is checked against the table schema
// (writer schema decodable, REQUIRED fields present, DATE/TIMESTAMP/DATETIME/TIME in range,
// strings UTF-8); one bad row fails its whole append and nothing of it is written.
// Committed rows are kept serialized and decoded by Rows and tabledata.list.
//
// Where errors go (gRPC code / StorageError code):
//
//	append at offset < row count     response.error  ALREADY_EXISTS / OFFSET_ALREADY_EXISTS
//	append at offset > row count     response.error  OUT_OF_RANGE / OFFSET_OUT_OF_RANGE
//	append to a finalized stream     response.error  INVALID_ARGUMENT / STREAM_FINALIZED
//	(a committed PENDING stream is finalized)
//	append to an unknown stream      response.error  NOT_FOUND / STREAM_NOT_FOUND
//	bad rows                         response.error  INVALID_ARGUMENT, plus response.row_errors
//	writer schema with extra fields  response.error  INVALID_ARGUMENT / SCHEMA_MISMATCH_EXTRA_FIELDS
//	Get/FinalizeWriteStream unknown  RPC error       NOT_FOUND / STREAM_NOT_FOUND
//	CreateWriteStream, no table      RPC error       NOT_FOUND / TABLE_NOT_FOUND
//	BatchCommit: not finalized, or forgotten (ForgetStream)  stream_errors INVALID_STREAM_STATE
//	BatchCommit: committed before    stream_errors   STREAM_ALREADY_COMMITTED
//	BatchCommit: unknown stream      stream_errors   STREAM_NOT_FOUND
//	BatchCommit: not PENDING         stream_errors   INVALID_STREAM_TYPE
//
// An error in response.error leaves the connection open for further appends, as the
// reference says ("User can retry with adjusted offset within the same RPC connection").
//
// # Classifying errors in a client
//
// AppendResult.GetResult and FullResponse return the response's error as a gRPC status
// error, not as an *apierror.APIError, so errors.As finds none: parse it with
// apierror.FromError. ExtractProtoMessage returns nil when it found the StorageError; the
// example in managedwriter's package documentation tests for != nil, which is backwards.
//
//	off, err := result.GetResult(ctx) // off is -1 (NoStreamOffset) on error
//	if apiErr, ok := apierror.FromError(err); ok {
//		se := &storagepb.StorageError{}
//		if apiErr.Details().ExtractProtoMessage(se) == nil { // found
//			switch se.GetCode() {
//			case storagepb.StorageError_OFFSET_ALREADY_EXISTS: // rows exist at that offset
//			case storagepb.StorageError_OFFSET_OUT_OF_RANGE: // rows are missing before it
//			case storagepb.StorageError_STREAM_FINALIZED, storagepb.StorageError_STREAM_NOT_FOUND:
//			}
//		}
//		_ = apiErr.GRPCStatus().Code() // codes.AlreadyExists, codes.OutOfRange, ...
//	}
//	if full, _ := result.FullResponse(ctx); len(full.GetRowErrors()) > 0 {
//		// RowError.index/message per bad row; nothing of the append was written
//	}
//
// OFFSET_ALREADY_EXISTS says rows exist at that offset, not that they are the rows just
// sent. BatchCommitWriteStreams reports stream failures inside a successful RPC: a commit
// happened only if err == nil, resp.GetStreamErrors() is empty and resp.GetCommitTime() is
// set.
//
// # Differences from BigQuery
//
// Not implemented: BUFFERED streams and FlushRows, Arrow rows, schema updates
// (tables.patch/update, updated_schema), missing_value_interpretations and column default
// values (an absent field is NULL unless its proto field declares a default), queries and
// jobs, quotas, idle-connection and stream expiry (ForgetStream simulates expiry). Writer
// schemas must be self-contained proto2 descriptors (what managedwriter/adapt makes): no
// google.protobuf well-known types, groups or maps. Unknown proto fields in rows are
// skipped. Value checks stop at ranges and UTF-8: NUMERIC precision, GEOGRAPHY syntax and
// length limits are not checked. Error messages imitate the service's but are not
// identical: match on codes, never on text.
package bqfake
