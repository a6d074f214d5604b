package bqfake

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	"google.golang.org/api/option"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// ErrNotFound is returned (wrapped) by the Go API for a project, dataset, table or stream
// that does not exist.
var ErrNotFound = errors.New("bqfake: not found")

// ErrRowsDiscarded is returned by Rows when the server runs with DiscardRows.
var ErrRowsDiscarded = errors.New("bqfake: row data is discarded (DiscardRows)")

// ListenConfig says where the two endpoints listen. An empty address means
// "127.0.0.1:0", a free loopback port.
type ListenConfig struct {
	// GRPC is the host:port of the Storage Write API (gRPC, plaintext).
	GRPC string
	// HTTP is the host:port of the BigQuery v2 REST API subset.
	HTTP string
}

// Option configures a Server.
type Option func(*config)

type config struct {
	location string
	discard  bool
	now      func() time.Time
}

// WithLocation sets the location of datasets created without one ("US" by default); write
// streams report their dataset's location.
func WithLocation(loc string) Option { return func(c *config) { c.location = loc } }

// DiscardRows makes the server validate and count rows without keeping their bytes, for
// benchmarks that push more data than fits in memory. Rows and tabledata.list then fail
// with ErrRowsDiscarded; RowCount and tables.get numRows still count.
func DiscardRows() Option { return func(c *config) { c.discard = true } }

// WithClock replaces time.Now for create and commit times.
func WithClock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// Calls counts the RPCs the server has answered, for assertions in tests.
type Calls struct {
	CreateWriteStream       int64
	AppendConnections       int64 // AppendRows bidi streams opened
	AppendRows              int64 // append requests, over all connections
	GetWriteStream          int64
	FinalizeWriteStream     int64
	BatchCommitWriteStreams int64
}

// Server is a running fake: a Storage Write API gRPC server and a BigQuery v2 REST
// server on loopback, sharing one in-memory store. It is safe for concurrent use.
type Server struct {
	cfg config

	mu        sync.Mutex
	datasets  map[string]*dataset // key "project/dataset"
	streams   map[string]*stream  // key: full stream name
	forgotten map[string]bool     // names removed by ForgetStream
	schemas   map[schemaKey]*writerSchema

	calls struct {
		create, conns, append, get, finalize, commit atomic.Int64
	}

	grpcLis  net.Listener
	httpLis  net.Listener
	grpcSrv  *grpc.Server
	httpSrv  *http.Server
	serveWG  sync.WaitGroup
	closeOne sync.Once
}

// New starts a server on free loopback ports.
func New(opts ...Option) (*Server, error) { return Start(ListenConfig{}, opts...) }

// Start starts a server listening where lc says. Close stops it.
func Start(lc ListenConfig, opts ...Option) (*Server, error) {
	s := &Server{
		cfg:       config{location: "US", now: time.Now},
		datasets:  map[string]*dataset{},
		streams:   map[string]*stream{},
		forgotten: map[string]bool{},
		schemas:   map[schemaKey]*writerSchema{},
	}
	for _, o := range opts {
		o(&s.cfg)
	}
	var err error
	if s.grpcLis, err = net.Listen("tcp", orLoopback(lc.GRPC)); err != nil {
		return nil, fmt.Errorf("bqfake: listen grpc: %w", err)
	}
	if s.httpLis, err = net.Listen("tcp", orLoopback(lc.HTTP)); err != nil {
		s.grpcLis.Close()
		return nil, fmt.Errorf("bqfake: listen http: %w", err)
	}
	s.grpcSrv = grpc.NewServer(
		grpc.MaxRecvMsgSize(maxRequestBytes+1<<20),
		grpc.WaitForHandlers(true),
	)
	storagepb.RegisterBigQueryWriteServer(s.grpcSrv, &writeService{s: s})
	s.httpSrv = &http.Server{Handler: s.restHandler(), ReadHeaderTimeout: 10 * time.Second}
	s.serveWG.Add(2)
	go func() {
		defer s.serveWG.Done()
		_ = s.grpcSrv.Serve(s.grpcLis)
	}()
	go func() {
		defer s.serveWG.Done()
		_ = s.httpSrv.Serve(s.httpLis)
	}()
	return s, nil
}

func orLoopback(addr string) string {
	if addr == "" {
		return "127.0.0.1:0"
	}
	return addr
}

// Close stops both servers, ending open AppendRows connections, and waits for their
// goroutines. It is safe to call more than once.
func (s *Server) Close() error {
	var err error
	s.closeOne.Do(func() {
		s.grpcSrv.Stop()
		err = s.httpSrv.Close()
		s.serveWG.Wait()
	})
	return err
}

// GRPCAddr is the host:port of the Storage Write API.
func (s *Server) GRPCAddr() string { return s.grpcLis.Addr().String() }

// HTTPURL is the root URL of the REST server, without a path ("http://127.0.0.1:PORT").
// The client library's endpoint is HTTPURL()+"/bigquery/v2/"; see BigQueryClientOptions.
func (s *Server) HTTPURL() string { return "http://" + s.httpLis.Addr().String() }

// WriteClientOptions are the options managedwriter.NewClient (or the raw
// storage.NewBigQueryWriteClient) needs to reach this server: its gRPC endpoint, no
// credentials, and a plaintext transport.
func (s *Server) WriteClientOptions() []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint(s.GRPCAddr()),
		option.WithoutAuthentication(),
		option.WithGRPCDialOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
	}
}

// BigQueryClientOptions are the options bigquery.NewClient needs to reach this server.
func (s *Server) BigQueryClientOptions() []option.ClientOption {
	return []option.ClientOption{
		option.WithEndpoint(s.HTTPURL() + "/bigquery/v2/"),
		option.WithoutAuthentication(),
	}
}

// Calls returns how many RPCs of each kind the server has answered so far.
func (s *Server) Calls() Calls {
	return Calls{
		CreateWriteStream:       s.calls.create.Load(),
		AppendConnections:       s.calls.conns.Load(),
		AppendRows:              s.calls.append.Load(),
		GetWriteStream:          s.calls.get.Load(),
		FinalizeWriteStream:     s.calls.finalize.Load(),
		BatchCommitWriteStreams: s.calls.commit.Load(),
	}
}

// ForgetStream drops a write stream's metadata, as BigQuery does when it garbage-collects
// a stream: GetWriteStream, AppendRows and FinalizeWriteStream then say NOT_FOUND, and
// BatchCommitWriteStreams reports INVALID_STREAM_STATE. Rows already committed stay in the
// table; rows of an uncommitted PENDING stream are gone.
func (s *Server) ForgetStream(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.streams[name]
	if !ok {
		return fmt.Errorf("forget stream %s: %w", name, ErrNotFound)
	}
	if st.isDefault {
		return fmt.Errorf("forget stream %s: the _default stream cannot be forgotten", name)
	}
	delete(s.streams, name)
	s.forgotten[name] = true
	return nil
}
