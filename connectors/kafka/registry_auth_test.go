package kafka

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// A registry that refuses the credentials (401) or what they ask (403) says so with the
// status, the registry's URL and what to check, at once (it is not asked again), and without
// the credentials; while reading it stops the pipeline as an unavailable registry does.
func TestRegistryRefusesCredentials(t *testing.T) {
	const secret = "pw-s3cret"
	for _, c := range []struct {
		status int
		want   string
	}{
		{http.StatusUnauthorized, `401 Unauthorized from the schema registry at %URL%, fetching the latest schema of subject "t-value": check basic.auth.user.info`},
		{http.StatusForbidden, `403 Forbidden from the schema registry at %URL%, fetching the latest schema of subject "t-value": the credentials of basic.auth.user.info (or of the URL) are not allowed this`},
	} {
		var asked atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			asked.Add(1)
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			w.WriteHeader(c.status)
			_, _ = w.Write([]byte(`{"error_code": 40101, "message": "bad password ` + secret + `"}`))
		}))
		t.Cleanup(srv.Close)
		want := strings.ReplaceAll(c.want, "%URL%", srv.URL)
		got := buildErrors(t, "type: ReadFromKafka\nconfig:\n"+config("t", "format: AVRO", "confluent_schema_registry_url: "+srv.URL,
			"consumer_config: {basic.auth.user.info: 'reader:"+secret+"'}"))
		if !strings.Contains(got, want) || strings.Contains(got, secret) || asked.Load() != 1 {
			t.Errorf("after %d requests:\n%s\nwant %q, without the password", asked.Load(), got, want)
		}

		reg, err := newSchemaRegistry(strings.Replace(srv.URL, "http://", "http://reader:"+secret+"@", 1), "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = reg.byID(context.Background(), 7)
		if !errors.Is(err, errRegistryUnavailable) || !strings.Contains(err.Error(), "fetching schema id 7") || strings.Contains(err.Error(), secret) {
			t.Errorf("fetching a writer's schema: %v; want the run stopped, without the password", err)
		}
	}
}
