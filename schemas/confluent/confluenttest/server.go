// Package confluenttest is a Confluent-compatible schema registry on loopback for tests of
// the packages that use schemas/confluent.
package confluenttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sluicehq/sluice/schemas/confluent"
	"github.com/twmb/franz-go/pkg/sr"
)

// Server is a Confluent-compatible schema registry on loopback, with the subset of the
// REST API that pkg/sr uses for sluice: POST /subjects/{s}/versions (register), POST
// /subjects/{s} (look up), GET /schemas/ids/{id}, GET /subjects/{s}/versions/latest. As the
// real one, it gives the same schema text the same id under every subject.
type Server struct {
	*httptest.Server
	User, Pass string // basic auth it requires; none when empty

	// Fail, when set and true for a request, makes the server answer 500.
	Fail func(r *http.Request) bool

	mu       sync.Mutex
	schemas  []sr.Schema      // id-1 -> schema
	subjects map[string][]int // subject -> ids of its versions
	requests map[string]int   // "GET /schemas/ids/{id}" and so on -> count
}

// NewServer starts a registry that holds no schema; it stops when the test ends.
func NewServer(t *testing.T) *Server {
	t.Helper()
	g := &Server{subjects: map[string][]int{}, requests: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /subjects/{subject}/versions", g.register)
	mux.HandleFunc("POST /subjects/{subject}", g.lookup)
	mux.HandleFunc("GET /schemas/ids/{id}", g.byID)
	mux.HandleFunc("GET /subjects/{subject}/versions/latest", g.latest)
	g.Server = httptest.NewServer(g.guard(mux))
	t.Cleanup(g.Close)
	return g
}

// guard counts requests and checks credentials.
func (g *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.requests[r.Method+" "+r.URL.Path]++
		fail := g.Fail != nil && g.Fail(r)
		g.mu.Unlock()
		if fail {
			g.answer(w, http.StatusInternalServerError, map[string]any{"error_code": 50001, "message": "Error in the backend data store"})
			return
		}
		if g.User != "" {
			if u, p, ok := r.BasicAuth(); !ok || u != g.User || p != g.Pass {
				g.answer(w, http.StatusUnauthorized, map[string]any{"error_code": 401, "message": "Unauthorized"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Subject returns the ids of the versions of subject, oldest first.
func (g *Server) Subject(subject string) []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int(nil), g.subjects[subject]...)
}

// Schema returns the schema with id.
func (g *Server) Schema(id int) sr.Schema {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.schemas[id-1]
}

func (g *Server) answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// add registers s under subject and returns its id, as POST /subjects/{s}/versions does.
func (g *Server) Add(subject string, s sr.Schema) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	id := 0
	for i, have := range g.schemas {
		if have.Schema == s.Schema && have.Type == s.Type {
			id = i + 1
		}
	}
	if id == 0 {
		g.schemas = append(g.schemas, s)
		id = len(g.schemas)
	}
	versions := g.subjects[subject]
	if len(versions) == 0 || versions[len(versions)-1] != id {
		g.subjects[subject] = append(versions, id)
	}
	return id
}

// count returns how often a request was made, e.g. "GET /schemas/ids/1".
func (g *Server) Count(request string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.requests[request]
}

func (g *Server) register(w http.ResponseWriter, r *http.Request) {
	var s sr.Schema
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil || s.Schema == "" {
		g.answer(w, http.StatusUnprocessableEntity, map[string]any{"error_code": 42201, "message": "Invalid schema"})
		return
	}
	g.answer(w, http.StatusOK, map[string]any{"id": g.Add(r.PathValue("subject"), s)})
}

func (g *Server) lookup(w http.ResponseWriter, r *http.Request) {
	var s sr.Schema
	_ = json.NewDecoder(r.Body).Decode(&s)
	subject := r.PathValue("subject")
	g.mu.Lock()
	defer g.mu.Unlock()
	for v, id := range g.subjects[subject] {
		if have := g.schemas[id-1]; have.Schema == s.Schema && have.Type == s.Type {
			g.answer(w, http.StatusOK, sr.SubjectSchema{Subject: subject, Version: v + 1, ID: id, Schema: have})
			return
		}
	}
	g.answer(w, http.StatusNotFound, map[string]any{"error_code": 40403, "message": "Schema not found"})
}

func (g *Server) byID(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	g.mu.Lock()
	defer g.mu.Unlock()
	if id < 1 || id > len(g.schemas) {
		g.answer(w, http.StatusNotFound, map[string]any{"error_code": 40403, "message": fmt.Sprintf("Schema %d not found", id)})
		return
	}
	g.answer(w, http.StatusOK, g.schemas[id-1])
}

func (g *Server) latest(w http.ResponseWriter, r *http.Request) {
	subject := r.PathValue("subject")
	g.mu.Lock()
	defer g.mu.Unlock()
	versions := g.subjects[subject]
	if len(versions) == 0 {
		g.answer(w, http.StatusNotFound, map[string]any{"error_code": 40401, "message": fmt.Sprintf("Subject '%s' not found.", subject)})
		return
	}
	id := versions[len(versions)-1]
	g.answer(w, http.StatusOK, sr.SubjectSchema{Subject: subject, Version: len(versions), ID: id, Schema: g.schemas[id-1]})
}

// urlWith returns the server's URL with user info.
func (g *Server) URLWith(user, pass string) string {
	return strings.Replace(g.URL, "://", "://"+user+":"+pass+"@", 1)
}

// WireValue returns a value in the Confluent wire format.
func WireValue(id int, body []byte) []byte {
	return append(confluent.Header(id), body...)
}

// FewAttempts makes failed registry requests fail at once for the test.
func FewAttempts(t *testing.T) {
	old := confluent.Attempts
	confluent.Attempts = 1
	t.Cleanup(func() { confluent.Attempts = old })
}

// Refusing starts a registry that answers every request with status (401 or 403) and a
// message that quotes secret, as some registries quote what they refuse; asked counts the
// requests.
func Refusing(t *testing.T, status int, secret string) (srv *httptest.Server, asked *atomic.Int64) {
	asked = new(atomic.Int64)
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"error_code": 40101, "message": "bad password ` + secret + `"}`))
	}))
	t.Cleanup(srv.Close)
	return srv, asked
}
