package confluent_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/schemas/confluent"
	"github.com/sluicehq/sluice/schemas/confluent/confluenttest"
)

// A registry that refuses the credentials (401) or what they ask (403) is not asked again; the
// error stops the run (a refusal is ErrUnavailable) and never shows the credentials, also
// when they come from the URL and the registry's reply quotes them.
func TestRegistryRefusesCredentials(t *testing.T) {
	const secret = "pw-s3cret"
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		srv, _ := confluenttest.Refusing(t, status, secret)
		reg, err := confluent.NewRegistry(strings.Replace(srv.URL, "http://", "http://reader:"+secret+"@", 1), "")
		if err != nil {
			t.Fatal(err)
		}
		_, err = reg.ByID(context.Background(), 7)
		if !errors.Is(err, confluent.ErrUnavailable) || !strings.Contains(err.Error(), "fetching schema id 7") || strings.Contains(err.Error(), secret) {
			t.Errorf("fetching a writer's schema: %v; want the run stopped, without the password", err)
		}
	}
}
