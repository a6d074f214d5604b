package bqfake

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"cloud.google.com/go/bigquery"
	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	bq "google.golang.org/api/bigquery/v2"
)

type dataset struct {
	meta   *bq.Dataset
	tables map[string]*table
}

// table holds committed rows as the batches they were appended in, each with the writer
// schema that encodes it.
type table struct {
	project, dataset, id string
	meta                 *bq.Table
	cols                 []*column
	created              time.Time
	batches              []batch
	nrows, nbytes        int64
	def                  *stream // the _default stream, made on first use
}

type batch struct {
	ws   *writerSchema
	rows [][]byte // nil under DiscardRows
	n    int64
	size int64
}

// stream is a write stream. Rows of a PENDING stream wait in pending until it is
// committed; other streams write to the table at once.
type stream struct {
	name      string
	tbl       *table
	typ       storagepb.WriteStream_Type
	isDefault bool
	created   time.Time
	committed time.Time // zero until committed; create time for COMMITTED streams
	finalized bool
	rows      int64
	pending   []batch
}

func (t *table) path() string {
	return "projects/" + t.project + "/datasets/" + t.dataset + "/tables/" + t.id
}

// parseTableName splits "projects/P/datasets/D/tables/T".
func parseTableName(name string) (project, ds, tbl string, ok bool) {
	p := strings.Split(name, "/")
	if len(p) != 6 || p[0] != "projects" || p[2] != "datasets" || p[4] != "tables" || p[1] == "" || p[3] == "" || p[5] == "" {
		return "", "", "", false
	}
	return p[1], p[3], p[5], true
}

// parseStreamName splits "projects/P/datasets/D/tables/T/streams/ID" into the table name
// and the stream ID.
func parseStreamName(name string) (tableName, id string, ok bool) {
	i := strings.LastIndex(name, "/streams/")
	if i < 0 {
		return "", "", false
	}
	tableName, id = name[:i], name[i+len("/streams/"):]
	if _, _, _, ok := parseTableName(tableName); !ok || id == "" || strings.Contains(id, "/") {
		return "", "", false
	}
	return tableName, id, true
}

// tableLocked finds a table; s.mu is held.
func (s *Server) tableLocked(project, ds, tbl string) *table {
	d := s.datasets[project+"/"+ds]
	if d == nil {
		return nil
	}
	return d.tables[tbl]
}

// ensureDatasetLocked returns the dataset, creating it if create is set; s.mu is held.
func (s *Server) ensureDatasetLocked(project, ds string, create bool) *dataset {
	if d := s.datasets[project+"/"+ds]; d != nil || !create {
		return d
	}
	now := s.cfg.now()
	ms := strconv.FormatInt(now.UnixMilli(), 10)
	d := &dataset{
		meta: &bq.Dataset{
			Kind:             "bigquery#dataset",
			Id:               project + ":" + ds,
			DatasetReference: &bq.DatasetReference{ProjectId: project, DatasetId: ds},
			Location:         s.cfg.location,
			CreationTime:     now.UnixMilli(),
			LastModifiedTime: now.UnixMilli(),
			Etag:             ms,
			Type:             "DEFAULT",
		},
		tables: map[string]*table{},
	}
	s.datasets[project+"/"+ds] = d
	return d
}

// insertTable validates and stores a table, filling the fields the service sets.
func (s *Server) insertTable(project, ds string, meta *bq.Table, createDataset bool) (*bq.Table, error) {
	if meta.TableReference == nil || meta.TableReference.TableId == "" {
		return nil, &restError{code: 400, reason: "invalid", msg: "tableReference.tableId is required"}
	}
	ref := meta.TableReference
	if (ref.ProjectId != "" && ref.ProjectId != project) || (ref.DatasetId != "" && ref.DatasetId != ds) {
		return nil, &restError{code: 400, reason: "invalid", msg: "tableReference does not match the request path"}
	}
	var fields []*bq.TableFieldSchema
	if meta.Schema != nil {
		fields = meta.Schema.Fields
	}
	cols, err := normalizeSchema(fields, "")
	if err != nil {
		return nil, &restError{code: 400, reason: "invalid", msg: err.Error()}
	}
	if err := checkPartitioning(meta, cols); err != nil {
		return nil, &restError{code: 400, reason: "invalid", msg: err.Error()}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.ensureDatasetLocked(project, ds, createDataset)
	if d == nil {
		return nil, &restError{code: 404, reason: "notFound", msg: fmt.Sprintf("Not found: Dataset %s:%s", project, ds)}
	}
	if d.tables[ref.TableId] != nil {
		return nil, &restError{code: 409, reason: "duplicate", msg: fmt.Sprintf("Already Exists: Table %s:%s.%s", project, ds, ref.TableId)}
	}
	now := s.cfg.now()
	m := *meta
	m.Kind = "bigquery#table"
	m.Id = fmt.Sprintf("%s:%s.%s", project, ds, ref.TableId)
	m.TableReference = &bq.TableReference{ProjectId: project, DatasetId: ds, TableId: ref.TableId}
	m.CreationTime, m.LastModifiedTime = now.UnixMilli(), uint64(now.UnixMilli())
	m.Etag = strconv.FormatInt(now.UnixNano(), 36)
	m.Location = d.meta.Location
	if m.Type == "" {
		m.Type = "TABLE"
	}
	if m.Schema == nil {
		m.Schema = &bq.TableSchema{}
	}
	d.tables[ref.TableId] = &table{project: project, dataset: ds, id: ref.TableId, meta: &m, cols: cols, created: now}
	return s.tableMetaLocked(d.tables[ref.TableId]), nil
}

// tableMetaLocked is the table's REST resource with current row counts; s.mu is held.
func (s *Server) tableMetaLocked(t *table) *bq.Table {
	m := *t.meta
	m.NumRows = uint64(t.nrows)
	m.NumBytes = t.nbytes
	return &m
}

// CreateDataset creates an empty dataset in the server's default location, as
// datasets.insert would; a dataset that exists already is left as it is.
func (s *Server) CreateDataset(project, datasetID string) error {
	if project == "" || datasetID == "" {
		return fmt.Errorf("bqfake: create dataset %q:%q: project and dataset must be set", project, datasetID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ensureDatasetLocked(project, datasetID, true)
	return nil
}

// CreateTable creates a table (and its dataset, if missing) with the given schema, as
// tables.insert would.
func (s *Server) CreateTable(project, datasetID, tableID string, schema bigquery.Schema) error {
	js, err := schema.ToJSONFields()
	if err != nil {
		return fmt.Errorf("bqfake: create table %s.%s: %w", datasetID, tableID, err)
	}
	var fields []*bq.TableFieldSchema
	if err := json.Unmarshal(js, &fields); err != nil {
		return fmt.Errorf("bqfake: create table %s.%s: %w", datasetID, tableID, err)
	}
	meta := &bq.Table{
		TableReference: &bq.TableReference{ProjectId: project, DatasetId: datasetID, TableId: tableID},
		Schema:         &bq.TableSchema{Fields: fields},
	}
	if _, err := s.insertTable(project, datasetID, meta, true); err != nil {
		return fmt.Errorf("bqfake: create table %s.%s: %w", datasetID, tableID, err)
	}
	return nil
}

// committedBatches returns a table's committed batches and its columns.
func (s *Server) committedBatches(project, ds, tbl string) ([]batch, []*column, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tableLocked(project, ds, tbl)
	if t == nil {
		return nil, nil, fmt.Errorf("bqfake: table %s:%s.%s: %w", project, ds, tbl, ErrNotFound)
	}
	if s.cfg.discard {
		return nil, nil, ErrRowsDiscarded
	}
	return t.batches[:len(t.batches):len(t.batches)], t.cols, nil
}

// Rows returns a table's committed rows in commit order, decoded with the writer schema
// each was appended with, as column name -> value: INTEGER int64, FLOAT float64, BOOLEAN
// bool, STRING/JSON/GEOGRAPHY string, BYTES []byte, TIMESTAMP time.Time (UTC, from
// microseconds), DATE civil.Date, DATETIME civil.DateTime, TIME civil.Time,
// NUMERIC/BIGNUMERIC *big.Rat, RECORD map[string]any, REPEATED []any (empty, not nil, when
// there are no values). NULL is nil. Every column of the table is present.
func (s *Server) Rows(project, datasetID, tableID string) ([]map[string]any, error) {
	batches, _, err := s.committedBatches(project, datasetID, tableID)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	for _, b := range batches {
		for _, r := range b.rows {
			row, err := decodeRow(b.ws, r)
			if err != nil {
				return nil, fmt.Errorf("bqfake: rows of %s.%s: %w", datasetID, tableID, err)
			}
			out = append(out, row)
		}
	}
	return out, nil
}

// RowCount returns how many committed rows a table holds (also under DiscardRows).
func (s *Server) RowCount(project, datasetID, tableID string) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tableLocked(project, datasetID, tableID)
	if t == nil {
		return 0, fmt.Errorf("bqfake: table %s:%s.%s: %w", project, datasetID, tableID, ErrNotFound)
	}
	return t.nrows, nil
}
