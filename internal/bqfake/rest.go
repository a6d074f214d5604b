package bqfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	bq "google.golang.org/api/bigquery/v2"
)

// restBase is the path prefix of the v2 API; requests may also come without it.
const restBase = "/bigquery/v2"

// defaultPageRows is the page size of tabledata.list when maxResults is not given.
const defaultPageRows = 10000

// restError is an HTTP error in the v2 API's JSON error shape, which googleapi.CheckResponse
// turns into a *googleapi.Error.
type restError struct {
	code   int
	reason string // notFound, duplicate, invalid, resourceInUse
	msg    string
}

func (e *restError) Error() string { return e.msg }

var restStatus = map[int]string{400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 409: "ALREADY_EXISTS"}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = 500, []byte(`{"error":{"code":500,"message":"bqfake: cannot encode response"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

func writeErr(w http.ResponseWriter, err error) {
	var re *restError
	if !errors.As(err, &re) {
		re = &restError{code: 500, reason: "internalError", msg: err.Error()}
	}
	writeJSON(w, re.code, map[string]any{"error": map[string]any{
		"code":    re.code,
		"message": re.msg,
		"errors":  []any{map[string]any{"message": re.msg, "domain": "global", "reason": re.reason}},
		"status":  restStatus[re.code],
	}})
}

func notFound(what string) error {
	return &restError{code: 404, reason: "notFound", msg: "Not found: " + what}
}

// restHandler serves the part of the BigQuery v2 REST API that cloud.google.com/go/bigquery
// needs for datasets, tables and reading rows back.
func (s *Server) restHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /projects/{project}/datasets", s.listDatasets)
	mux.HandleFunc("POST /projects/{project}/datasets", s.insertDataset)
	mux.HandleFunc("GET /projects/{project}/datasets/{dataset}", s.getDataset)
	mux.HandleFunc("DELETE /projects/{project}/datasets/{dataset}", s.deleteDataset)
	mux.HandleFunc("GET /projects/{project}/datasets/{dataset}/tables", s.listTables)
	mux.HandleFunc("POST /projects/{project}/datasets/{dataset}/tables", s.insertTableREST)
	mux.HandleFunc("GET /projects/{project}/datasets/{dataset}/tables/{table}", s.getTable)
	mux.HandleFunc("DELETE /projects/{project}/datasets/{dataset}/tables/{table}", s.deleteTable)
	mux.HandleFunc("GET /projects/{project}/datasets/{dataset}/tables/{table}/data", s.listTableData)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rest, ok := strings.CutPrefix(r.URL.Path, restBase); ok && strings.HasPrefix(rest, "/") {
			r = r.Clone(r.Context())
			r.URL.Path, r.URL.RawPath = rest, ""
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *Server) insertDataset(w http.ResponseWriter, r *http.Request) {
	project := r.PathValue("project")
	var in bq.Dataset
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeErr(w, &restError{code: 400, reason: "invalid", msg: "invalid dataset: " + err.Error()})
		return
	}
	ref := in.DatasetReference
	if ref == nil || ref.DatasetId == "" || (ref.ProjectId != "" && ref.ProjectId != project) {
		writeErr(w, &restError{code: 400, reason: "invalid", msg: "datasetReference.datasetId is required and must match the project"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.datasets[project+"/"+ref.DatasetId] != nil {
		writeErr(w, &restError{code: 409, reason: "duplicate", msg: fmt.Sprintf("Already Exists: Dataset %s:%s", project, ref.DatasetId)})
		return
	}
	d := s.ensureDatasetLocked(project, ref.DatasetId, true)
	meta := *d.meta
	meta.FriendlyName, meta.Description, meta.Labels = in.FriendlyName, in.Description, in.Labels
	if in.Location != "" {
		meta.Location = in.Location
	}
	d.meta = &meta
	writeJSON(w, 200, d.meta)
}

// pathDatasetLocked returns the dataset the request's path names, with its project and
// name, or writes a 404 and returns nil. s.mu must be held.
func (s *Server) pathDatasetLocked(w http.ResponseWriter, r *http.Request) (*dataset, string, string) {
	project, ds := r.PathValue("project"), r.PathValue("dataset")
	d := s.datasets[project+"/"+ds]
	if d == nil {
		writeErr(w, notFound(fmt.Sprintf("Dataset %s:%s", project, ds)))
	}
	return d, project, ds
}

func (s *Server) getDataset(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, _, _ := s.pathDatasetLocked(w, r)
	if d == nil {
		return
	}
	writeJSON(w, 200, d.meta)
}

func (s *Server) deleteDataset(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, project, ds := s.pathDatasetLocked(w, r)
	if d == nil {
		return
	}
	if len(d.tables) > 0 && r.URL.Query().Get("deleteContents") != "true" {
		writeErr(w, &restError{code: 400, reason: "resourceInUse", msg: fmt.Sprintf("Dataset %s:%s is still in use", project, ds)})
		return
	}
	for _, t := range d.tables {
		s.dropTableLocked(t)
	}
	delete(s.datasets, project+"/"+ds)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listDatasets(w http.ResponseWriter, r *http.Request) {
	project := r.PathValue("project")
	s.mu.Lock()
	defer s.mu.Unlock()
	var list []*bq.DatasetListDatasets
	for _, d := range s.datasets {
		if d.meta.DatasetReference.ProjectId == project {
			list = append(list, &bq.DatasetListDatasets{Id: d.meta.Id, Kind: d.meta.Kind,
				DatasetReference: d.meta.DatasetReference, Location: d.meta.Location, FriendlyName: d.meta.FriendlyName})
		}
	}
	slices.SortFunc(list, func(a, b *bq.DatasetListDatasets) int { return strings.Compare(a.Id, b.Id) })
	writeJSON(w, 200, &bq.DatasetList{Kind: "bigquery#datasetList", Datasets: list})
}

func (s *Server) insertTableREST(w http.ResponseWriter, r *http.Request) {
	var in bq.Table
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeErr(w, &restError{code: 400, reason: "invalid", msg: "invalid table: " + err.Error()})
		return
	}
	out, err := s.insertTable(r.PathValue("project"), r.PathValue("dataset"), &in, false)
	if err != nil {
		writeErr(w, err)
		return
	}
	writeJSON(w, 200, out)
}

// pathTableLocked returns the table the request's path names, or writes a 404 and returns
// nil. s.mu must be held.
func (s *Server) pathTableLocked(w http.ResponseWriter, r *http.Request) *table {
	project, ds, id := r.PathValue("project"), r.PathValue("dataset"), r.PathValue("table")
	t := s.tableLocked(project, ds, id)
	if t == nil {
		writeErr(w, notFound(fmt.Sprintf("Table %s:%s.%s", project, ds, id)))
	}
	return t
}

func (s *Server) getTable(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.pathTableLocked(w, r)
	if t == nil {
		return
	}
	writeJSON(w, 200, s.tableMetaLocked(t))
}

func (s *Server) deleteTable(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.pathTableLocked(w, r)
	if t == nil {
		return
	}
	s.dropTableLocked(t)
	w.WriteHeader(http.StatusNoContent)
}

// dropTableLocked removes a table with its write streams and cached writer schemas.
func (s *Server) dropTableLocked(t *table) {
	delete(s.datasets[t.project+"/"+t.dataset].tables, t.id)
	for name, st := range s.streams {
		if st.tbl == t {
			delete(s.streams, name)
		}
	}
	for k := range s.schemas {
		if k.tbl == t {
			delete(s.schemas, k)
		}
	}
}

func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, _, _ := s.pathDatasetLocked(w, r)
	if d == nil {
		return
	}
	var list []*bq.TableListTables
	for _, t := range d.tables {
		list = append(list, &bq.TableListTables{Id: t.meta.Id, Kind: t.meta.Kind, TableReference: t.meta.TableReference,
			Type: t.meta.Type, CreationTime: t.meta.CreationTime, TimePartitioning: t.meta.TimePartitioning,
			Clustering: t.meta.Clustering})
	}
	slices.SortFunc(list, func(a, b *bq.TableListTables) int { return strings.Compare(a.Id, b.Id) })
	writeJSON(w, 200, &bq.TableList{Kind: "bigquery#tableList", Tables: list, TotalItems: int64(len(list))})
}

// listTableData is tabledata.list: committed rows from startIndex (or pageToken), at most
// maxResults of them.
func (s *Server) listTableData(w http.ResponseWriter, r *http.Request) {
	project, ds, id := r.PathValue("project"), r.PathValue("dataset"), r.PathValue("table")
	q := r.URL.Query()
	start, err := uintParam(q.Get("pageToken"), 0)
	if err == nil && q.Get("pageToken") == "" {
		start, err = uintParam(q.Get("startIndex"), 0)
	}
	limit, err2 := uintParam(q.Get("maxResults"), defaultPageRows)
	if limit == 0 {
		limit = defaultPageRows
	}
	if err = errors.Join(err, err2); err != nil {
		writeErr(w, &restError{code: 400, reason: "invalid", msg: err.Error()})
		return
	}
	batches, cols, err := s.committedBatches(project, ds, id)
	if errors.Is(err, ErrNotFound) {
		writeErr(w, notFound(fmt.Sprintf("Table %s:%s.%s", project, ds, id)))
		return
	} else if err != nil {
		writeErr(w, &restError{code: 400, reason: "invalid", msg: err.Error()})
		return
	}
	int64TS := q.Get("formatOptions.useInt64Timestamp") == "true"
	rows := []any{}
	var total, skip int64 = 0, start
	for _, b := range batches {
		total += b.n
		if skip >= b.n {
			skip -= b.n
			continue
		}
		for _, raw := range b.rows[skip:] {
			if int64(len(rows)) >= limit {
				break
			}
			row, err := decodeRow(b.ws, raw)
			if err != nil {
				writeErr(w, err)
				return
			}
			f := make([]any, len(cols))
			for i, c := range cols {
				f[i] = map[string]any{"v": cellValue(c, row[c.name], int64TS)}
			}
			rows = append(rows, map[string]any{"f": f})
		}
		skip = 0
	}
	out := map[string]any{"kind": "bigquery#tableDataList", "totalRows": strconv.FormatInt(total, 10), "rows": rows}
	if next := start + int64(len(rows)); next < total {
		out["pageToken"] = strconv.FormatInt(next, 10)
	}
	writeJSON(w, 200, out)
}

func uintParam(v string, def int64) (int64, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("invalid paging parameter %q", v)
	}
	return n, nil
}
