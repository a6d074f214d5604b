package bqfake

import (
	"context"
	"errors"
	"testing"
	"time"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	"cloud.google.com/go/bigquery/storage/managedwriter"
	"cloud.google.com/go/bigquery/storage/managedwriter/adapt"
	"github.com/googleapis/gax-go/v2/apierror"
	"go.uber.org/goleak"
	"google.golang.org/api/iterator"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// managedwriter imports OpenCensus, whose view worker starts at init.
		goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		// managedwriter cancels a replaced connection's context 20 s later, in a goroutine
		// of the client's, whatever the server does.
		goleak.IgnoreAnyFunction("cloud.google.com/go/bigquery/storage/managedwriter.(*connection).getStream.func1"))
}

const (
	testProject = "proj"
	testDataset = "ds"
)

// eventSchema is the table most tests write to: a REQUIRED column, scalars, a repeated
// column and a repeated RECORD.
var eventSchema = bigquery.Schema{
	{Name: "id", Type: bigquery.IntegerFieldType, Required: true},
	{Name: "name", Type: bigquery.StringFieldType},
	{Name: "ts", Type: bigquery.TimestampFieldType},
	{Name: "day", Type: bigquery.DateFieldType},
	{Name: "tags", Type: bigquery.StringFieldType, Repeated: true},
	{Name: "attrs", Type: bigquery.RecordFieldType, Repeated: true, Schema: bigquery.Schema{
		{Name: "k", Type: bigquery.StringFieldType, Required: true},
		{Name: "score", Type: bigquery.FloatFieldType},
	}},
}

// env is a running server with the two real clients connected to it.
type env struct {
	srv *Server
	mw  *managedwriter.Client
	bq  *bigquery.Client
}

func newEnv(t *testing.T, opts ...Option) *env {
	t.Helper()
	srv, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	mw, err := managedwriter.NewClient(ctx, testProject, srv.WriteClientOptions()...)
	if err != nil {
		srv.Close()
		t.Fatal(err)
	}
	bqc, err := bigquery.NewClient(ctx, testProject, srv.BigQueryClientOptions()...)
	if err != nil {
		mw.Close()
		srv.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		bqc.Close()
		mw.Close()
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &env{srv: srv, mw: mw, bq: bqc}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// createTable creates a table through the REST API with the real client.
func (e *env) createTable(t *testing.T, name string, schema bigquery.Schema) {
	t.Helper()
	ctx := testCtx(t)
	ds := e.bq.Dataset(testDataset)
	if _, err := ds.Metadata(ctx); err != nil {
		if err := ds.Create(ctx, nil); err != nil {
			t.Fatalf("create dataset: %v", err)
		}
	}
	if err := ds.Table(name).Create(ctx, &bigquery.TableMetadata{Schema: schema}); err != nil {
		t.Fatalf("create table %s: %v", name, err)
	}
}

func tableParent(name string) string {
	return managedwriter.TableParentFromParts(testProject, testDataset, name)
}

// rowCodec builds rows the way a sink would: the writer schema comes from the table schema
// through managedwriter/adapt, rows are dynamic messages.
type rowCodec struct {
	md protoreflect.MessageDescriptor
	dp *descriptorpb.DescriptorProto
}

func newCodec(t testing.TB, schema bigquery.Schema) *rowCodec {
	t.Helper()
	ts, err := adapt.BQSchemaToStorageTableSchema(schema)
	if err != nil {
		t.Fatal(err)
	}
	d, err := adapt.StorageSchemaToProto2Descriptor(ts, "root")
	if err != nil {
		t.Fatal(err)
	}
	md := d.(protoreflect.MessageDescriptor)
	dp, err := adapt.NormalizeDescriptor(md)
	if err != nil {
		t.Fatal(err)
	}
	return &rowCodec{md: md, dp: dp}
}

// rows encodes rows given as protojson; REQUIRED fields may be left out on purpose.
func (c *rowCodec) rows(t testing.TB, jsonRows ...string) [][]byte {
	t.Helper()
	out := make([][]byte, len(jsonRows))
	for i, js := range jsonRows {
		m := dynamicpb.NewMessage(c.md)
		if err := (protojson.UnmarshalOptions{AllowPartial: true}).Unmarshal([]byte(js), m); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		out[i] = b
	}
	return out
}

// stream opens a managed stream of the given type on a table.
func (e *env) stream(t *testing.T, table string, typ managedwriter.StreamType, c *rowCodec) *managedwriter.ManagedStream {
	t.Helper()
	ms, err := e.mw.NewManagedStream(testCtx(t),
		managedwriter.WithDestinationTable(tableParent(table)),
		managedwriter.WithType(typ),
		managedwriter.WithSchemaDescriptor(c.dp))
	if err != nil {
		t.Fatalf("NewManagedStream: %v", err)
	}
	t.Cleanup(func() { ms.Close() })
	return ms
}

// appendAt appends rows (at an offset, if off >= 0) and waits for the result.
func appendAt(t *testing.T, ms *managedwriter.ManagedStream, rows [][]byte, off int64) (int64, error) {
	t.Helper()
	var opts []managedwriter.AppendOption
	if off >= 0 {
		opts = append(opts, managedwriter.WithOffset(off))
	}
	res, err := ms.AppendRows(testCtx(t), rows, opts...)
	if err != nil {
		t.Fatalf("AppendRows: %v", err)
	}
	return res.GetResult(testCtx(t))
}

// storageErr classifies an error the way the package documentation says to: the gRPC code
// of the APIError, and the StorageError detail when there is one.
func storageErr(t *testing.T, err error) (codes.Code, storagepb.StorageError_StorageErrorCode) {
	t.Helper()
	// Not errors.As: AppendResult.GetResult returns a *status.Error, which FromError parses.
	apiErr, ok := apierror.FromError(err)
	if !ok {
		t.Fatalf("want a gRPC status error, got %T: %v", err, err)
	}
	se := &storagepb.StorageError{}
	if apiErr.Details().ExtractProtoMessage(se) != nil {
		return apiErr.GRPCStatus().Code(), storagepb.StorageError_STORAGE_ERROR_CODE_UNSPECIFIED
	}
	return apiErr.GRPCStatus().Code(), se.GetCode()
}

// wantStorageErr fails unless err has the gRPC code and StorageError code given.
func wantStorageErr(t *testing.T, err error, code codes.Code, se storagepb.StorageError_StorageErrorCode) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %v / %v, got no error", code, se)
	}
	gotCode, gotSE := storageErr(t, err)
	if gotCode != code || gotSE != se {
		t.Fatalf("got %v / %v, want %v / %v (%v)", gotCode, gotSE, code, se, err)
	}
}

func (e *env) rows(t *testing.T, table string) []map[string]any {
	t.Helper()
	rows, err := e.srv.Rows(testProject, testDataset, table)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// readIDs reads the table back through bigquery.Client's Table.Read and returns the
// first column of every row.
func (e *env) readIDs(t *testing.T, table string) []int64 {
	t.Helper()
	it := e.bq.Dataset(testDataset).Table(table).Read(testCtx(t))
	var ids []int64
	for {
		var row []bigquery.Value
		err := it.Next(&row)
		if errors.Is(err, iterator.Done) {
			return ids
		}
		if err != nil {
			t.Fatalf("Table.Read: %v", err)
		}
		ids = append(ids, row[0].(int64))
	}
}

func (e *env) commit(t *testing.T, table string, streams ...string) *storagepb.BatchCommitWriteStreamsResponse {
	t.Helper()
	resp, err := e.mw.BatchCommitWriteStreams(testCtx(t), &storagepb.BatchCommitWriteStreamsRequest{
		Parent: tableParent(table), WriteStreams: streams,
	})
	if err != nil {
		t.Fatalf("BatchCommitWriteStreams: %v", err)
	}
	return resp
}

func (e *env) getStream(t *testing.T, name string, view storagepb.WriteStreamView) (*storagepb.WriteStream, error) {
	t.Helper()
	return e.mw.GetWriteStream(testCtx(t), &storagepb.GetWriteStreamRequest{Name: name, View: view})
}
