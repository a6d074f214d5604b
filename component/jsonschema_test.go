package component

import (
	"encoding/json"
	"reflect"
	"testing"
)

// A list of strings is written as one string or as a list (the decoder takes both, as Beam's
// ReadFromKafka topic does), so an editor using `sluice schema` accepts both; an enum applies
// to the string and to each item.
func TestJSONSchemaStringOrList(t *testing.T) {
	type config struct {
		Topic []string `yaml:"topic" doc:"a topic or a list of them"`
		Modes []string `yaml:"modes" enum:"a,b"`
	}
	got, err := json.Marshal(JSONSchema(reflect.TypeFor[config]()))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{` +
		`"modes":{"anyOf":[{"enum":["a","b"],"type":"string"},{"items":{"enum":["a","b"],"type":"string"},"type":"array"}]},` +
		`"topic":{"anyOf":[{"type":"string"},{"items":{"type":"string"},"type":"array"}],"description":"a topic or a list of them"}},` +
		`"type":"object"}`
	if string(got) != want {
		t.Errorf("schema\n got %s\nwant %s", got, want)
	}
}
