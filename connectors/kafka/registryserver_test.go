package kafka

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
)

// registryServer is a Confluent-compatible schema registry on loopback, with the subset of the
// REST API that pkg/sr uses for sluice: POST /subjects/{s}/versions (register), POST
// /subjects/{s} (look up), GET /schemas/ids/{id}, GET /subjects/{s}/versions/latest. As the
// real one, it gives the same schema text the same id under every subject.
type registryServer struct {
	*httptest.Server
	user, pass string // basic auth it requires; none when empty

	mu       sync.Mutex
	schemas  []sr.Schema                // id-1 -> schema
	subjects map[string][]int           // subject -> ids of its versions
	requests map[string]int             // "GET /schemas/ids/{id}" and so on -> count
	fail     func(r *http.Request) bool // when set and true: answer 500
}

func newRegistryServer(t *testing.T) *registryServer {
	t.Helper()
	g := &registryServer{subjects: map[string][]int{}, requests: map[string]int{}}
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
func (g *registryServer) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.requests[r.Method+" "+r.URL.Path]++
		fail := g.fail != nil && g.fail(r)
		g.mu.Unlock()
		if fail {
			g.answer(w, http.StatusInternalServerError, map[string]any{"error_code": 50001, "message": "Error in the backend data store"})
			return
		}
		if g.user != "" {
			if u, p, ok := r.BasicAuth(); !ok || u != g.user || p != g.pass {
				g.answer(w, http.StatusUnauthorized, map[string]any{"error_code": 401, "message": "Unauthorized"})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (g *registryServer) answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// add registers s under subject and returns its id, as POST /subjects/{s}/versions does.
func (g *registryServer) add(subject string, s sr.Schema) int {
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
func (g *registryServer) count(request string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.requests[request]
}

func (g *registryServer) register(w http.ResponseWriter, r *http.Request) {
	var s sr.Schema
	if err := json.NewDecoder(r.Body).Decode(&s); err != nil || s.Schema == "" {
		g.answer(w, http.StatusUnprocessableEntity, map[string]any{"error_code": 42201, "message": "Invalid schema"})
		return
	}
	g.answer(w, http.StatusOK, map[string]any{"id": g.add(r.PathValue("subject"), s)})
}

func (g *registryServer) lookup(w http.ResponseWriter, r *http.Request) {
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

func (g *registryServer) byID(w http.ResponseWriter, r *http.Request) {
	id, _ := strconv.Atoi(r.PathValue("id"))
	g.mu.Lock()
	defer g.mu.Unlock()
	if id < 1 || id > len(g.schemas) {
		g.answer(w, http.StatusNotFound, map[string]any{"error_code": 40403, "message": fmt.Sprintf("Schema %d not found", id)})
		return
	}
	g.answer(w, http.StatusOK, g.schemas[id-1])
}

func (g *registryServer) latest(w http.ResponseWriter, r *http.Request) {
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
func (g *registryServer) urlWith(user, pass string) string {
	return strings.Replace(g.URL, "://", "://"+user+":"+pass+"@", 1)
}

// wireValue returns a value in the Confluent wire format.
func wireValue(id int, body []byte) []byte {
	return append(wireHeader(id), body...)
}
