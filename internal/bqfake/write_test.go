package bqfake

import (
	"errors"
	"strings"
	"testing"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	"cloud.google.com/go/bigquery/storage/managedwriter"
	"github.com/googleapis/gax-go/v2/apierror"
	"google.golang.org/grpc/codes"
)

// The API reference this file cites, by method or message.
const ref = "https://cloud.google.com/bigquery/docs/reference/storage/rpc/google.cloud.bigquery.storage.v1"

// ref#...BigQueryWrite.AppendRows: "If offset is specified, the offset is checked against
// the end of stream." An append at the end succeeds; AppendResult.offset is where its
// first row went ("The row offset at which the last append occurred").
func TestAppendAtExactOffset(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)

	off, err := appendAt(t, ms, c.rows(t, `{"id": 1}`, `{"id": 2}`, `{"id": 3}`), 0)
	if err != nil || off != 0 {
		t.Fatalf("append at 0: offset %d, err %v; want 0, nil", off, err)
	}
	off, err = appendAt(t, ms, c.rows(t, `{"id": 4}`, `{"id": 5}`), 3)
	if err != nil || off != 3 {
		t.Fatalf("append at 3: offset %d, err %v; want 3, nil", off, err)
	}
	// Without an offset the append goes to the end of the stream.
	off, err = appendAt(t, ms, c.rows(t, `{"id": 6}`), -1)
	if err != nil || off != 5 {
		t.Fatalf("append without offset: offset %d, err %v; want 5, nil", off, err)
	}
}

// ref#...BigQueryWrite.AppendRows: "The server returns ... ALREADY_EXISTS if user
// provides an offset that has already been written to. User can retry with adjusted
// offset within the same RPC connection."
func TestOffsetAlreadyExists(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)
	if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`, `{"id": 2}`), 0); err != nil {
		t.Fatal(err)
	}

	_, err := appendAt(t, ms, c.rows(t, `{"id": 1}`, `{"id": 2}`), 0)
	wantStorageErr(t, err, codes.AlreadyExists, storagepb.StorageError_OFFSET_ALREADY_EXISTS)
	if !strings.Contains(err.Error(), "expected offset 2, received 0") {
		t.Errorf("message %q does not say the expected and received offsets", err)
	}
	// The same connection goes on.
	if off, err := appendAt(t, ms, c.rows(t, `{"id": 3}`), 2); err != nil || off != 2 {
		t.Fatalf("append at 2 after the error: offset %d, err %v", off, err)
	}
	if got := e.srv.Calls().AppendConnections; got != 1 {
		t.Errorf("AppendRows connections = %d, want 1 (an in-band error keeps the connection)", got)
	}
	if n, _ := ms.Finalize(testCtx(t)); n != 3 {
		t.Errorf("row count %d, want 3: the rejected append wrote nothing", n)
	}
}

// ref#...BigQueryWrite.AppendRows: "The server returns OUT_OF_RANGE in AppendRowsResponse
// if an attempt is made to append to an offset beyond the current end of the stream."
func TestOffsetOutOfRange(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)

	_, err := appendAt(t, ms, c.rows(t, `{"id": 1}`), 5)
	wantStorageErr(t, err, codes.OutOfRange, storagepb.StorageError_OFFSET_OUT_OF_RANGE)
	if off, err := appendAt(t, ms, c.rows(t, `{"id": 1}`), 0); err != nil || off != 0 {
		t.Fatalf("append at 0 after the error: offset %d, err %v", off, err)
	}
}

// https://cloud.google.com/bigquery/docs/write-api-batch: "If you call AppendRows after
// calling FinalizeWriteStream, it returns a StorageError with
// StorageErrorCode.STREAM_FINALIZED in the google.rpc.Status error." A committed stream was
// finalized first, so it answers the same.
func TestAppendToFinalizedStream(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)
	if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Finalize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	_, err := appendAt(t, ms, c.rows(t, `{"id": 2}`), 1)
	wantStorageErr(t, err, codes.InvalidArgument, storagepb.StorageError_STREAM_FINALIZED)

	e.commit(t, "events", ms.StreamName())
	_, err = appendAt(t, ms, c.rows(t, `{"id": 2}`), -1)
	wantStorageErr(t, err, codes.InvalidArgument, storagepb.StorageError_STREAM_FINALIZED)
	if got := len(e.rows(t, "events")); got != 1 {
		t.Errorf("table has %d rows, want 1", got)
	}
}

// ref#...FinalizeWriteStreamResponse: "row_count: Number of rows in the finalized
// stream." Finalizing again changes nothing and reports the same count.
func TestFinalizeReturnsRowCount(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)
	if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`, `{"id": 2}`, `{"id": 3}`), 0); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		n, err := ms.Finalize(testCtx(t))
		if err != nil || n != 3 {
			t.Fatalf("Finalize #%d = %d, %v; want 3, nil", i+1, n, err)
		}
	}
}

// ref#...BigQueryWrite.AppendRows: "For PENDING streams, data is not made visible until
// the stream itself is finalized (via the FinalizeWriteStream rpc), and the stream is
// explicitly committed via the BatchCommitWriteStreams rpc."
func TestPendingRowsInvisibleUntilCommit(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)
	if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`, `{"id": 2}`), 0); err != nil {
		t.Fatal(err)
	}
	if ids := e.readIDs(t, "events"); len(ids) != 0 {
		t.Fatalf("before finalize, Table.Read returned %v; want nothing", ids)
	}
	if _, err := ms.Finalize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if ids := e.readIDs(t, "events"); len(ids) != 0 {
		t.Fatalf("after finalize, Table.Read returned %v; want nothing", ids)
	}
	e.commit(t, "events", ms.StreamName())
	if ids := e.readIDs(t, "events"); len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("after commit, Table.Read returned %v; want [1 2]", ids)
	}
}

// ref#...BatchCommitWriteStreamsResponse: "commit_time: The time at which streams were
// committed ... This field will only exist when there are no stream errors." and
// ref#...WriteStream: "If the stream is of PENDING type, empty commit_time means it is not
// committed."
func TestCommitTimeSet(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)
	if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Finalize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	before, err := e.getStream(t, ms.StreamName(), storagepb.WriteStreamView_BASIC)
	if err != nil || before.GetCommitTime() != nil {
		t.Fatalf("before commit: commit_time %v, err %v; want unset", before.GetCommitTime(), err)
	}
	resp := e.commit(t, "events", ms.StreamName())
	if resp.GetCommitTime() == nil || len(resp.GetStreamErrors()) > 0 {
		t.Fatalf("commit: commit_time %v, stream errors %v", resp.GetCommitTime(), resp.GetStreamErrors())
	}
	after, err := e.getStream(t, ms.StreamName(), storagepb.WriteStreamView_BASIC)
	if err != nil || !after.GetCommitTime().AsTime().Equal(resp.GetCommitTime().AsTime()) {
		t.Fatalf("GetWriteStream commit_time %v (err %v), want the commit's %v", after.GetCommitTime(), err, resp.GetCommitTime())
	}
	if after.GetType() != storagepb.WriteStream_PENDING || after.GetCreateTime() == nil {
		t.Errorf("GetWriteStream: type %v, create_time %v", after.GetType(), after.GetCreateTime())
	}
}

// ref#...BigQueryWrite.BatchCommitWriteStreams: "Streams must be finalized before commit
// and cannot be committed multiple times." A second commit reports
// STREAM_ALREADY_COMMITTED and adds no rows.
func TestStreamAlreadyCommitted(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)
	if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Finalize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	e.commit(t, "events", ms.StreamName())
	resp := e.commit(t, "events", ms.StreamName())
	errs := resp.GetStreamErrors()
	if len(errs) != 1 || errs[0].GetCode() != storagepb.StorageError_STREAM_ALREADY_COMMITTED || errs[0].GetEntity() != ms.StreamName() {
		t.Fatalf("second commit: stream errors %v, want STREAM_ALREADY_COMMITTED for %s", errs, ms.StreamName())
	}
	if resp.GetCommitTime() != nil {
		t.Errorf("second commit set commit_time %v", resp.GetCommitTime())
	}
	if n := len(e.rows(t, "events")); n != 1 {
		t.Errorf("table has %d rows, want 1", n)
	}
}

// ref#...BatchCommitWriteStreamsResponse: "If non empty, certain streams have errors and
// ZERO stream is committed due to atomicity guarantee." and "Note if this field
// [commit_time] is not set, it means the commit was not successful." The RPC itself
// succeeds: err is nil, so a caller that only checks err believes it committed.
func TestCommitUnfinalizedStreamFailsWithNilError(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	done := e.stream(t, "events", managedwriter.PendingStream, c)
	open := e.stream(t, "events", managedwriter.PendingStream, c)
	for i, ms := range []*managedwriter.ManagedStream{done, open} {
		if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`), 0); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	if _, err := done.Finalize(testCtx(t)); err != nil {
		t.Fatal(err)
	}

	resp, err := e.mw.BatchCommitWriteStreams(testCtx(t), &storagepb.BatchCommitWriteStreamsRequest{
		Parent: tableParent("events"), WriteStreams: []string{done.StreamName(), open.StreamName()},
	})
	if err != nil {
		t.Fatalf("err = %v; the service reports stream errors in the response, not as an RPC error", err)
	}
	errs := resp.GetStreamErrors()
	if len(errs) != 1 || errs[0].GetCode() != storagepb.StorageError_INVALID_STREAM_STATE || errs[0].GetEntity() != open.StreamName() {
		t.Fatalf("stream errors %v, want INVALID_STREAM_STATE for the unfinalized stream", errs)
	}
	if resp.GetCommitTime() != nil {
		t.Fatalf("commit_time %v is set on a failed commit", resp.GetCommitTime())
	}
	if n := len(e.rows(t, "events")); n != 0 {
		t.Fatalf("%d rows visible; the finalized stream must not commit alone", n)
	}
	if ws, _ := e.getStream(t, done.StreamName(), storagepb.WriteStreamView_BASIC); ws.GetCommitTime() != nil {
		t.Fatalf("the finalized stream has commit_time %v", ws.GetCommitTime())
	}
	// Once both are finalized, the same commit succeeds.
	if _, err := open.Finalize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if resp := e.commit(t, "events", done.StreamName(), open.StreamName()); resp.GetCommitTime() == nil {
		t.Fatalf("commit after finalizing: %v", resp.GetStreamErrors())
	}
	if n := len(e.rows(t, "events")); n != 2 {
		t.Fatalf("%d rows visible, want 2", n)
	}
}

// ref#...StorageError.StorageErrorCode: "STREAM_NOT_FOUND: Stream is not found." and
// "INVALID_STREAM_TYPE: ... you try to commit a stream that is not pending."
func TestCommitUnknownOrCommittedTypeStream(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	committed := e.stream(t, "events", managedwriter.CommittedStream, c)
	unknown := tableParent("events") + "/streams/nosuchstream"
	resp := e.commit(t, "events", unknown, committed.StreamName())
	errs := resp.GetStreamErrors()
	if len(errs) != 2 || errs[0].GetCode() != storagepb.StorageError_STREAM_NOT_FOUND ||
		errs[1].GetCode() != storagepb.StorageError_INVALID_STREAM_TYPE || resp.GetCommitTime() != nil {
		t.Fatalf("stream errors %v, commit_time %v; want STREAM_NOT_FOUND, INVALID_STREAM_TYPE and no commit", errs, resp.GetCommitTime())
	}
}

// ref#...StorageError.StorageErrorCode: "INVALID_STREAM_STATE: ... you try to commit a
// stream that is not finalized or is garbaged." Once BigQuery has garbage-collected a
// stream, GetWriteStream says NOT_FOUND: the writer can no longer learn whether it was
// committed.
func TestForgottenStreamNotFound(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)
	if _, err := appendAt(t, ms, c.rows(t, `{"id": 1}`), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := ms.Finalize(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.getStream(t, ms.StreamName(), storagepb.WriteStreamView_BASIC); err != nil {
		t.Fatalf("GetWriteStream before ForgetStream: %v", err)
	}
	if err := e.srv.ForgetStream(ms.StreamName()); err != nil {
		t.Fatal(err)
	}
	_, err := e.getStream(t, ms.StreamName(), storagepb.WriteStreamView_BASIC)
	wantStorageErr(t, err, codes.NotFound, storagepb.StorageError_STREAM_NOT_FOUND)

	resp := e.commit(t, "events", ms.StreamName())
	if errs := resp.GetStreamErrors(); len(errs) != 1 || errs[0].GetCode() != storagepb.StorageError_INVALID_STREAM_STATE {
		t.Fatalf("commit of a forgotten stream: %v, want INVALID_STREAM_STATE", errs)
	}
	if err := e.srv.ForgetStream(ms.StreamName()); !errors.Is(err, ErrNotFound) {
		t.Errorf("forgetting twice: %v, want ErrNotFound", err)
	}

	// A writer still holding a forgotten stream: appends and Finalize say NOT_FOUND.
	open := e.stream(t, "events", managedwriter.PendingStream, c)
	if err := e.srv.ForgetStream(open.StreamName()); err != nil {
		t.Fatal(err)
	}
	_, err = appendAt(t, open, c.rows(t, `{"id": 2}`), 0)
	wantStorageErr(t, err, codes.NotFound, storagepb.StorageError_STREAM_NOT_FOUND)
	_, err = open.Finalize(testCtx(t))
	wantStorageErr(t, err, codes.NotFound, storagepb.StorageError_STREAM_NOT_FOUND)
}

// ref#...StorageError.StorageErrorCode: "SCHEMA_MISMATCH_EXTRA_FIELDS: There is a schema
// mismatch and it is caused by user schema has extra field than bigquery schema."
func TestWriterSchemaWithExtraField(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	wider := append(bigquery.Schema{}, eventSchema...)
	wider = append(wider, &bigquery.FieldSchema{Name: "extra", Type: bigquery.StringFieldType})
	c := newCodec(t, wider)
	ms := e.stream(t, "events", managedwriter.DefaultStream, c)
	_, err := appendAt(t, ms, c.rows(t, `{"id": 1, "extra": "x"}`), -1)
	wantStorageErr(t, err, codes.InvalidArgument, storagepb.StorageError_SCHEMA_MISMATCH_EXTRA_FIELDS)
	if !strings.Contains(err.Error(), "extra") {
		t.Errorf("message %q does not name the extra field", err)
	}
}

// ref#...AppendRowsResponse: "row_errors: If a request failed due to corrupted rows, no
// rows in the batch will be appended. The API will return row level error info, so that
// the caller can remove the bad rows and retry the request."
func TestRowErrorsOnMissingRequiredField(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.CommittedStream, c)

	res, err := ms.AppendRows(testCtx(t), c.rows(t, `{"id": 1}`, `{"name": "no id"}`, `{"id": 3}`), managedwriter.WithOffset(0))
	if err != nil {
		t.Fatal(err)
	}
	full, err := res.FullResponse(testCtx(t))
	wantStorageErr(t, err, codes.InvalidArgument, storagepb.StorageError_STORAGE_ERROR_CODE_UNSPECIFIED)
	rowErrs := full.GetRowErrors()
	if len(rowErrs) != 1 || rowErrs[0].GetIndex() != 1 || rowErrs[0].GetCode() != storagepb.RowError_FIELDS_ERROR ||
		!strings.Contains(rowErrs[0].GetMessage(), "id") {
		t.Fatalf("row errors %v, want one FIELDS_ERROR for row 1 naming id", rowErrs)
	}
	if n := len(e.rows(t, "events")); n != 0 {
		t.Fatalf("%d rows written; a failed append writes none", n)
	}
	// Nothing was written, so the good rows go again at offset 0.
	if off, err := appendAt(t, ms, c.rows(t, `{"id": 1}`, `{"id": 3}`), 0); err != nil || off != 0 {
		t.Fatalf("retry without the bad row: offset %d, err %v", off, err)
	}
}

// ref#...RowError: "index: Index of the malformed row in the request." Rows the writer
// schema cannot decode, values outside BigQuery's DATE/TIMESTAMP ranges and REQUIRED
// fields missing in nested records fail the append the same way.
func TestRowErrors(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.DefaultStream, c)
	good := c.rows(t, `{"id": 1}`)[0]
	for _, tc := range []struct {
		name string
		row  []byte
		want string
	}{
		{"garbage", []byte{0x0a, 0xff}, "cannot decode"},
		{"wrong wire type", []byte{0x0a, 0x01, 'x'}, "field id"}, // id (field 1) as bytes
		{"date before 0001-01-01", c.rows(t, `{"id": 1, "day": -800000}`)[0], "DATE"},
		{"timestamp after 9999", c.rows(t, `{"id": 1, "ts": "253402300800000000"}`)[0], "TIMESTAMP"},
		{"nested required missing", c.rows(t, `{"id": 1, "attrs": [{"score": 1.5}]}`)[0], "attrs.k"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := ms.AppendRows(testCtx(t), [][]byte{good, tc.row})
			if err != nil {
				t.Fatal(err)
			}
			full, err := res.FullResponse(testCtx(t))
			if err == nil {
				t.Fatal("append succeeded")
			}
			errs := full.GetRowErrors()
			if len(errs) != 1 || errs[0].GetIndex() != 1 || !strings.Contains(errs[0].GetMessage(), tc.want) {
				t.Fatalf("row errors %v, want row 1 with %q", errs, tc.want)
			}
		})
	}
	if n := len(e.rows(t, "events")); n != 0 {
		t.Fatalf("%d rows written by failed appends", n)
	}
}

// ref#...BigQueryWrite.CreateWriteStream: "every table has a special stream named
// '_default' to which data can be written. ... Data written to this stream is considered
// committed as soon as an acknowledgement is received." and ref#...AppendRows: "No offset
// information will be returned for appends to a default stream."
func TestDefaultStreamVisibleAtOnce(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.DefaultStream, c)
	if !strings.HasSuffix(ms.StreamName(), "/streams/_default") {
		t.Fatalf("stream name %s", ms.StreamName())
	}
	off, err := appendAt(t, ms, c.rows(t, `{"id": 7}`), -1)
	if err != nil || off != managedwriter.NoStreamOffset {
		t.Fatalf("append: offset %d, err %v; want no offset", off, err)
	}
	if ids := e.readIDs(t, "events"); len(ids) != 1 || ids[0] != 7 {
		t.Fatalf("Table.Read returned %v, want [7]", ids)
	}
	// "Specifying a value for this field is not allowed when calling AppendRows for the
	// '_default' stream." (AppendRowsRequest.offset)
	_, err = appendAt(t, ms, c.rows(t, `{"id": 8}`), 1)
	wantStorageErr(t, err, codes.InvalidArgument, storagepb.StorageError_STORAGE_ERROR_CODE_UNSPECIFIED)

	ws, err := e.getStream(t, ms.StreamName(), storagepb.WriteStreamView_BASIC)
	if err != nil || ws.GetType() != storagepb.WriteStream_COMMITTED {
		t.Fatalf("GetWriteStream(_default) = %v, %v", ws, err)
	}
	if _, err := ms.Finalize(testCtx(t)); err == nil {
		t.Error("Finalize on _default succeeded; it is not supported")
	}
}

// ref#...WriteStream.Type: "COMMITTED: Data will commit automatically and appear as soon
// as the write is acknowledged." ref#...WriteStream: "If a stream is of COMMITTED type,
// then it will have a commit_time same as create_time."
func TestCommittedStreamVisibleAtOnce(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.CommittedStream, c)
	if off, err := appendAt(t, ms, c.rows(t, `{"id": 1}`, `{"id": 2}`), 0); err != nil || off != 0 {
		t.Fatalf("append: %d, %v", off, err)
	}
	if ids := e.readIDs(t, "events"); len(ids) != 2 {
		t.Fatalf("Table.Read returned %v, want 2 rows", ids)
	}
	ws, err := e.getStream(t, ms.StreamName(), storagepb.WriteStreamView_BASIC)
	if err != nil || ws.GetCommitTime() == nil || !ws.GetCommitTime().AsTime().Equal(ws.GetCreateTime().AsTime()) {
		t.Fatalf("GetWriteStream = %v, %v; want commit_time = create_time", ws, err)
	}
}

// ref#...CreateWriteStreamRequest: "parent: Required. Reference to the table to which the
// stream belongs". A table that does not exist is NOT_FOUND; BUFFERED streams are not
// implemented by bqfake.
func TestCreateWriteStreamNeedsTable(t *testing.T) {
	e := newEnv(t)
	_, err := e.mw.CreateWriteStream(testCtx(t), &storagepb.CreateWriteStreamRequest{
		Parent: tableParent("missing"), WriteStream: &storagepb.WriteStream{Type: storagepb.WriteStream_PENDING},
	})
	wantStorageErr(t, err, codes.NotFound, storagepb.StorageError_TABLE_NOT_FOUND)

	e.createTable(t, "events", eventSchema)
	_, err = e.mw.CreateWriteStream(testCtx(t), &storagepb.CreateWriteStreamRequest{
		Parent: tableParent("events"), WriteStream: &storagepb.WriteStream{Type: storagepb.WriteStream_BUFFERED},
	})
	if code, _ := storageErr(t, err); code != codes.Unimplemented {
		t.Fatalf("BUFFERED: %v, want Unimplemented", err)
	}
	ws, err := e.mw.CreateWriteStream(testCtx(t), &storagepb.CreateWriteStreamRequest{
		Parent: tableParent("events"), WriteStream: &storagepb.WriteStream{Type: storagepb.WriteStream_PENDING},
	})
	if err != nil || !strings.HasPrefix(ws.GetName(), tableParent("events")+"/streams/") || ws.GetTableSchema() == nil {
		t.Fatalf("CreateWriteStream = %v, %v", ws, err)
	}
	if got := e.srv.Calls().CreateWriteStream; got != 3 {
		t.Errorf("Calls().CreateWriteStream = %d, want 3", got)
	}
}

// ref#...WriteStreamView: "The BASIC projection ... does not include schema information."
// "The FULL projection returns all available write stream metadata, including the schema."
func TestGetWriteStreamViews(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)
	basic, err := e.getStream(t, ms.StreamName(), storagepb.WriteStreamView_BASIC)
	if err != nil || basic.GetTableSchema() != nil || basic.GetName() != ms.StreamName() {
		t.Fatalf("BASIC = %v, %v", basic, err)
	}
	full, err := e.getStream(t, ms.StreamName(), storagepb.WriteStreamView_FULL)
	if err != nil {
		t.Fatal(err)
	}
	fields := full.GetTableSchema().GetFields()
	if len(fields) != len(eventSchema) || fields[0].GetMode() != storagepb.TableFieldSchema_REQUIRED ||
		fields[5].GetType() != storagepb.TableFieldSchema_STRUCT || len(fields[5].GetFields()) != 2 {
		t.Fatalf("FULL table_schema = %v", full.GetTableSchema())
	}
}

// ref#...AppendRowsRequest: "write_stream ... must be provided ... In all subsequent
// requests to an AppendRows connection, if you use the same connection to write to
// multiple tables". managedwriter's multiplexing sends writes for several default streams
// on one connection; each lands in its own table.
func TestMultiplexedConnection(t *testing.T) {
	srv, err := New()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx := testCtx(t)
	for _, name := range []string{"a", "b"} {
		if err := srv.CreateTable(testProject, testDataset, name, eventSchema); err != nil {
			t.Fatal(err)
		}
	}
	opts := append(srv.WriteClientOptions(), managedwriter.WithMultiplexing(), managedwriter.WithMultiplexPoolLimit(1))
	mw, err := managedwriter.NewClient(ctx, testProject, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer mw.Close()
	c := newCodec(t, eventSchema)
	var streams []*managedwriter.ManagedStream
	for _, name := range []string{"a", "b"} {
		ms, err := mw.NewManagedStream(ctx, managedwriter.WithDestinationTable(tableParent(name)),
			managedwriter.WithType(managedwriter.DefaultStream), managedwriter.WithSchemaDescriptor(c.dp))
		if err != nil {
			t.Fatal(err)
		}
		defer ms.Close()
		streams = append(streams, ms)
	}
	var results []*managedwriter.AppendResult
	for i := range 6 {
		res, err := streams[i%2].AppendRows(ctx, c.rows(t, `{"id": 1}`))
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	for i, res := range results {
		if _, err := res.GetResult(ctx); err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
	}
	for _, name := range []string{"a", "b"} {
		if n, _ := srv.RowCount(testProject, testDataset, name); n != 3 {
			t.Errorf("table %s has %d rows, want 3", name, n)
		}
	}
	if got := srv.Calls().AppendConnections; got != 1 {
		t.Errorf("%d AppendRows connections, want 1 shared", got)
	}
}

// The documented way to classify an append error, spelled out: the doc comment of
// managedwriter inverts ExtractProtoMessage's result (it returns nil when it found the
// detail).
func TestErrorClassificationPattern(t *testing.T) {
	e := newEnv(t)
	e.createTable(t, "events", eventSchema)
	c := newCodec(t, eventSchema)
	ms := e.stream(t, "events", managedwriter.PendingStream, c)
	_, err := appendAt(t, ms, c.rows(t, `{"id": 1}`), 9)

	apiErr, ok := apierror.FromError(err)
	if !ok {
		t.Fatalf("apierror.FromError(%v) failed", err)
	}
	se := &storagepb.StorageError{}
	if err := apiErr.Details().ExtractProtoMessage(se); err != nil {
		t.Fatalf("ExtractProtoMessage: %v", err)
	}
	if se.GetCode() != storagepb.StorageError_OFFSET_OUT_OF_RANGE || se.GetEntity() != ms.StreamName() {
		t.Fatalf("StorageError %v", se)
	}
	if apiErr.GRPCStatus().Code() != codes.OutOfRange {
		t.Fatalf("gRPC code %v", apiErr.GRPCStatus().Code())
	}
}
