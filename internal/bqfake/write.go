package bqfake

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"

	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// maxRequestBytes is the documented limit of one AppendRowsRequest.
const maxRequestBytes = 20 << 20

// maxRowErrors caps the row_errors of one response ("the list may not be complete").
const maxRowErrors = 100

const defaultStreamID = "_default"

// writeService implements storagepb.BigQueryWriteServer. FlushRows (BUFFERED streams only)
// is left unimplemented.
type writeService struct {
	storagepb.UnimplementedBigQueryWriteServer
	s *Server
}

// storageStatus is a google.rpc.Status carrying a StorageError detail, the way the service
// reports stream errors both in AppendRowsResponse.error and as RPC errors.
func storageStatus(code codes.Code, se storagepb.StorageError_StorageErrorCode, entity, msg string) *spb.Status {
	st := &spb.Status{Code: int32(code), Message: msg}
	if se != storagepb.StorageError_STORAGE_ERROR_CODE_UNSPECIFIED {
		detail, err := anypb.New(&storagepb.StorageError{Code: se, Entity: entity, ErrorMessage: msg})
		if err == nil {
			st.Details = []*anypb.Any{detail}
		}
	}
	return st
}

func notFoundStatus(se storagepb.StorageError_StorageErrorCode, entity string) *spb.Status {
	return storageStatus(codes.NotFound, se, entity, "Requested entity was not found. Entity: "+entity)
}

func newStreamID() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// streamLocked finds a write stream, making a table's _default stream on first use; it
// returns a NOT_FOUND status for unknown, forgotten or malformed names. s.mu is held.
func (s *Server) streamLocked(name string) (*stream, *spb.Status) {
	if st := s.streams[name]; st != nil {
		return st, nil
	}
	tableName, id, ok := parseStreamName(name)
	if !ok {
		return nil, storageStatus(codes.InvalidArgument, storagepb.StorageError_STORAGE_ERROR_CODE_UNSPECIFIED, name, "Invalid stream name. Entity: "+name)
	}
	if id != defaultStreamID {
		return nil, notFoundStatus(storagepb.StorageError_STREAM_NOT_FOUND, name)
	}
	p, d, t, _ := parseTableName(tableName)
	tbl := s.tableLocked(p, d, t)
	if tbl == nil {
		return nil, notFoundStatus(storagepb.StorageError_TABLE_NOT_FOUND, tableName)
	}
	tbl.def = &stream{name: name, tbl: tbl, typ: storagepb.WriteStream_COMMITTED, isDefault: true,
		created: tbl.created, committed: tbl.created}
	s.streams[name] = tbl.def
	return tbl.def, nil
}

func streamProto(st *stream, full bool) *storagepb.WriteStream {
	ws := &storagepb.WriteStream{
		Name:       st.name,
		Type:       st.typ,
		CreateTime: timestamppb.New(st.created),
		WriteMode:  storagepb.WriteStream_INSERT,
		Location:   st.tbl.meta.Location,
	}
	if !st.committed.IsZero() {
		ws.CommitTime = timestamppb.New(st.committed)
	}
	if full {
		ws.TableSchema = storageSchema(st.tbl.cols)
	}
	return ws
}

func (w *writeService) CreateWriteStream(_ context.Context, req *storagepb.CreateWriteStreamRequest) (*storagepb.WriteStream, error) {
	s := w.s
	s.calls.create.Add(1)
	p, d, t, ok := parseTableName(req.GetParent())
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "invalid parent table %q", req.GetParent())
	}
	typ := req.GetWriteStream().GetType()
	switch typ {
	case storagepb.WriteStream_PENDING, storagepb.WriteStream_COMMITTED:
	case storagepb.WriteStream_BUFFERED:
		return nil, status.Error(codes.Unimplemented, "bqfake does not implement BUFFERED streams")
	default:
		return nil, status.Errorf(codes.InvalidArgument, "write_stream.type must be set, got %v", typ)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tbl := s.tableLocked(p, d, t)
	if tbl == nil {
		return nil, status.ErrorProto(notFoundStatus(storagepb.StorageError_TABLE_NOT_FOUND, req.GetParent()))
	}
	st := &stream{name: tbl.path() + "/streams/" + newStreamID(), tbl: tbl, typ: typ, created: s.cfg.now()}
	if typ == storagepb.WriteStream_COMMITTED {
		st.committed = st.created
	}
	s.streams[st.name] = st
	return streamProto(st, true), nil
}

func (w *writeService) GetWriteStream(_ context.Context, req *storagepb.GetWriteStreamRequest) (*storagepb.WriteStream, error) {
	s := w.s
	s.calls.get.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, bad := s.streamLocked(req.GetName())
	if bad != nil {
		return nil, status.ErrorProto(bad)
	}
	return streamProto(st, req.GetView() == storagepb.WriteStreamView_FULL), nil
}

func (w *writeService) FinalizeWriteStream(_ context.Context, req *storagepb.FinalizeWriteStreamRequest) (*storagepb.FinalizeWriteStreamResponse, error) {
	s := w.s
	s.calls.finalize.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, bad := s.streamLocked(req.GetName())
	if bad != nil {
		return nil, status.ErrorProto(bad)
	}
	if st.isDefault {
		return nil, status.ErrorProto(storageStatus(codes.InvalidArgument, storagepb.StorageError_INVALID_STREAM_TYPE, st.name,
			"FinalizeWriteStream is not supported on the _default stream. Entity: "+st.name))
	}
	st.finalized = true
	return &storagepb.FinalizeWriteStreamResponse{RowCount: st.rows}, nil
}

func (w *writeService) BatchCommitWriteStreams(_ context.Context, req *storagepb.BatchCommitWriteStreamsRequest) (*storagepb.BatchCommitWriteStreamsResponse, error) {
	s := w.s
	s.calls.commit.Add(1)
	p, d, t, ok := parseTableName(req.GetParent())
	if !ok {
		return nil, status.Errorf(codes.InvalidArgument, "invalid parent table %q", req.GetParent())
	}
	if len(req.GetWriteStreams()) == 0 {
		return nil, status.Error(codes.InvalidArgument, "write_streams must not be empty")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tbl := s.tableLocked(p, d, t)
	if tbl == nil {
		return nil, status.ErrorProto(notFoundStatus(storagepb.StorageError_TABLE_NOT_FOUND, req.GetParent()))
	}
	var errs []*storagepb.StorageError
	fail := func(code storagepb.StorageError_StorageErrorCode, name, msg string) {
		errs = append(errs, &storagepb.StorageError{Code: code, Entity: name, ErrorMessage: msg})
	}
	var commit []*stream
	seen := map[string]bool{}
	for _, name := range req.GetWriteStreams() {
		if seen[name] {
			continue
		}
		seen[name] = true
		st := s.streams[name]
		switch {
		case st == nil && s.forgotten[name]:
			fail(storagepb.StorageError_INVALID_STREAM_STATE, name, "Stream is garbage collected: "+name)
		case st == nil:
			fail(storagepb.StorageError_STREAM_NOT_FOUND, name, "Stream is not found: "+name)
		case st.tbl != tbl:
			fail(storagepb.StorageError_STREAM_NOT_FOUND, name, "Stream does not belong to table "+req.GetParent()+": "+name)
		case st.typ != storagepb.WriteStream_PENDING:
			fail(storagepb.StorageError_INVALID_STREAM_TYPE, name, "Stream must be created in pending mode, actual: "+st.typ.String())
		case !st.committed.IsZero():
			fail(storagepb.StorageError_STREAM_ALREADY_COMMITTED, name, "Stream is already committed: "+name)
		case !st.finalized:
			fail(storagepb.StorageError_INVALID_STREAM_STATE, name, "Stream is not yet finalized: "+name)
		default:
			commit = append(commit, st)
		}
	}
	if len(errs) > 0 { // atomic: nothing is committed, and commit_time stays unset
		return &storagepb.BatchCommitWriteStreamsResponse{StreamErrors: errs}, nil
	}
	now := s.cfg.now()
	for _, st := range commit {
		st.committed = now
		for _, b := range st.pending {
			tbl.addLocked(b)
		}
		st.pending = nil
	}
	return &storagepb.BatchCommitWriteStreamsResponse{CommitTime: timestamppb.New(now)}, nil
}

// addLocked makes a batch visible in the table; s.mu is held.
func (t *table) addLocked(b batch) {
	t.batches = append(t.batches, b)
	t.nrows += b.n
	t.nbytes += b.size
}

// connState is what an AppendRows connection remembers between requests: its current
// stream and the writer schema, bound per stream it has written to.
type connState struct {
	stream  string
	desc    *descriptorpb.DescriptorProto
	descKey string
	bound   map[string]*writerSchema
}

// AppendRows answers each request in order. Failures of one append (offsets, finalized
// streams, bad rows, bad schemas) go back in AppendRowsResponse.error and the connection
// stays usable; protocol errors end the connection.
func (w *writeService) AppendRows(srv storagepb.BigQueryWrite_AppendRowsServer) error {
	w.s.calls.conns.Add(1)
	cs := &connState{bound: map[string]*writerSchema{}}
	for {
		req, err := srv.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		w.s.calls.append.Add(1)
		resp, err := w.s.appendOne(cs, req)
		if err != nil {
			return err
		}
		if err := srv.Send(resp); err != nil {
			return err
		}
	}
}

func (s *Server) appendOne(cs *connState, req *storagepb.AppendRowsRequest) (*storagepb.AppendRowsResponse, error) {
	name := req.GetWriteStream()
	if name == "" {
		if cs.stream == "" {
			return nil, status.Error(codes.InvalidArgument, "write_stream must be set in the first request of a connection")
		}
		name = cs.stream
	}
	cs.stream = name
	if req.GetArrowRows() != nil {
		return nil, status.Error(codes.Unimplemented, "bqfake supports proto_rows only")
	}
	fail := func(st *spb.Status) (*storagepb.AppendRowsResponse, error) {
		return &storagepb.AppendRowsResponse{WriteStream: name, Response: &storagepb.AppendRowsResponse_Error{Error: st}}, nil
	}
	invalid := func(msg string) (*storagepb.AppendRowsResponse, error) {
		return fail(storageStatus(codes.InvalidArgument, storagepb.StorageError_STORAGE_ERROR_CODE_UNSPECIFIED, name, msg+" Entity: "+name))
	}
	pr := req.GetProtoRows()
	if pr == nil || len(pr.GetRows().GetSerializedRows()) == 0 {
		return invalid("proto_rows.rows.serialized_rows is empty.")
	}
	if dp := pr.GetWriterSchema().GetProtoDescriptor(); dp != nil {
		key, err := proto.MarshalOptions{Deterministic: true}.Marshal(dp)
		if err != nil {
			return invalid("Invalid proto schema: " + err.Error())
		}
		if string(key) != cs.descKey {
			cs.desc, cs.descKey, cs.bound = dp, string(key), map[string]*writerSchema{}
		}
	}

	s.mu.Lock()
	st, bad := s.streamLocked(name)
	s.mu.Unlock()
	if bad != nil {
		return fail(bad)
	}
	ws := cs.bound[name]
	if ws == nil || ws.tbl != st.tbl { // a table dropped and made again is another table
		if cs.desc == nil {
			return invalid("writer_schema is required in the first request for a stream on a connection.")
		}
		var err error
		if ws, err = s.writerSchemaFor(st.tbl, cs.desc, cs.descKey); err != nil {
			var se *schemaError
			if errors.As(err, &se) {
				return fail(storageStatus(codes.InvalidArgument, se.code, name, se.msg+" Entity: "+name))
			}
			return nil, err
		}
		cs.bound[name] = ws
	}

	rows := pr.GetRows().GetSerializedRows()
	var size int
	var rowErrs []*storagepb.RowError
	for i, r := range rows {
		size += len(r)
		if msg := ws.plan.checkRow(r); msg != "" && len(rowErrs) < maxRowErrors {
			rowErrs = append(rowErrs, &storagepb.RowError{Index: int64(i), Code: storagepb.RowError_FIELDS_ERROR, Message: msg})
		}
	}
	if size > maxRequestBytes {
		return invalid(fmt.Sprintf("AppendRows request is too large: %d bytes of rows, the limit is %d.", size, maxRequestBytes))
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if st, bad = s.streamLocked(name); bad != nil {
		return fail(bad)
	}
	if st.finalized {
		return fail(storageStatus(codes.InvalidArgument, storagepb.StorageError_STREAM_FINALIZED, name,
			"Stream has been finalized and cannot be appended. Entity: "+name))
	}
	if off := req.GetOffset(); off != nil {
		switch {
		case st.isDefault:
			return invalid("Offset is not allowed on the _default stream.")
		case off.GetValue() < st.rows:
			msg := fmt.Sprintf("The offset is within stream, expected offset %d, received %d", st.rows, off.GetValue())
			return fail(storageStatus(codes.AlreadyExists, storagepb.StorageError_OFFSET_ALREADY_EXISTS, name, msg))
		case off.GetValue() > st.rows:
			msg := fmt.Sprintf("The offset is beyond stream, expected offset %d, received %d Entity: %s", st.rows, off.GetValue(), name)
			return fail(storageStatus(codes.OutOfRange, storagepb.StorageError_OFFSET_OUT_OF_RANGE, name, msg))
		}
	}
	if len(rowErrs) > 0 { // nothing of this append is written
		resp, _ := fail(storageStatus(codes.InvalidArgument, storagepb.StorageError_STORAGE_ERROR_CODE_UNSPECIFIED, name,
			"Errors found while processing rows. Please refer to the row_errors field for details. The list may not be complete because of the size limitations. Entity: "+name))
		resp.RowErrors = rowErrs
		return resp, nil
	}
	b := batch{ws: ws, n: int64(len(rows)), size: int64(size)}
	if !s.cfg.discard {
		b.rows = rows
	}
	start := st.rows
	st.rows += b.n
	if st.typ == storagepb.WriteStream_PENDING {
		st.pending = append(st.pending, b)
	} else {
		st.tbl.addLocked(b)
	}
	result := &storagepb.AppendRowsResponse_AppendResult{}
	if !st.isDefault {
		result.Offset = wrapperspb.Int64(start)
	}
	return &storagepb.AppendRowsResponse{WriteStream: name, Response: &storagepb.AppendRowsResponse_AppendResult_{AppendResult: result}}, nil
}

// writerSchemaFor compiles a writer schema for a table, or returns the cached one.
func (s *Server) writerSchemaFor(tbl *table, dp *descriptorpb.DescriptorProto, key string) (*writerSchema, error) {
	k := schemaKey{tbl: tbl, desc: key}
	s.mu.Lock()
	ws := s.schemas[k]
	s.mu.Unlock()
	if ws != nil {
		return ws, nil
	}
	ws, err := compileWriterSchema(dp, tbl.cols)
	if err != nil {
		return nil, err
	}
	ws.tbl = tbl
	s.mu.Lock()
	s.schemas[k] = ws
	s.mu.Unlock()
	return ws, nil
}
