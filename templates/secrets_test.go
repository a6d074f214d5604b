package templates

import (
	"strings"
	"testing"
)

const secretHeader = `template:
  parameters:
    - name: password
      type: password
`

// TestOneLetterSecret: a secret is masked where the template puts it, never by searching for
// its value: a password "p" garbles no message and shows nowhere.
func TestOneLetterSecret(t *testing.T) {
	path := write(t, "p.yaml", secretHeader+`pipeline:
  type: chain
  transforms:
    - type: ReadFromKafka
      config:
        topic: pipeline-input
        properties:
          sasl.password: {{ password }}
          sasl.jaas.config: 'PlainLoginModule required password="{{ password }}";'
`)
	r, err := render(t, path, params("password", "p"))
	if err != nil {
		t.Fatal(err)
	}
	if got := mappingValue(node(t, r, "pipeline.transforms.0.config.properties"), "sasl.password").Value; got != "p" {
		t.Errorf("the run must get the password, got %q", got)
	}
	shown := r.Display()
	if strings.Count(shown, "<secret:password>") != 2 || !strings.Contains(shown, "sasl.password: <secret:password>\n") ||
		!strings.Contains(shown, `password="<secret:password>";'`) || !strings.Contains(shown, "type: ReadFromKafka") ||
		!strings.Contains(shown, "topic: pipeline-input") {
		t.Errorf("render must mask the password where it is, and nothing else:\n%s", shown)
	}
	if got := string(r.MaskedSource()); strings.Contains(got, `"p"`) || strings.Count(got, "<secret:password>") != 2 {
		t.Errorf("masked source:\n%s", got)
	}
	if got := r.Secrets.Mask("type: pipeline -p"); got != "type: pipeline -p" {
		t.Errorf("the runtime guard garbles text: %q", got)
	}
	doc := r.DisplayDoc()
	r.Doc = doc
	if got := mappingValue(node(t, r, "pipeline.transforms.0.config.properties"), "sasl.password").Value; got != "<secret:password>" {
		t.Errorf("DisplayDoc shows %q", got)
	}
	if got := node(t, r, "pipeline.transforms.0.config.topic").Value; got != "pipeline-input" {
		t.Errorf("DisplayDoc changes other values: %q", got)
	}
}

// TestSecretInjectionErrorNamesOnlyTheParameter: a secret that would change the structure is
// reported by its parameter's name, with no part of its value.
func TestSecretInjectionErrorNamesOnlyTheParameter(t *testing.T) {
	path := write(t, "p.yaml", secretHeader+`pipeline:
  plain: {{ password }}
  shouted: {{ password | upper }}
`)
	const value = "x\nLeakedKey98: 1"
	_, err := render(t, path, params("password", value))
	if err == nil {
		t.Fatal("a value that adds a key was rendered")
	}
	msg := err.Error()
	if !strings.Contains(msg, `the value of parameter "password" would change the pipeline's structure (it adds a key)`) {
		t.Errorf("the error must name the parameter: %s", msg)
	}
	if strings.Contains(strings.ToLower(msg), "leakedkey") {
		t.Errorf("the error shows part of the secret: %s", msg)
	}

	// Printed as it is, the same value is placed: a string with a newline, no new key.
	path = write(t, "p.yaml", secretHeader+"pipeline:\n  plain: {{ password }}\n")
	r, err := render(t, path, params("password", value))
	if err != nil {
		t.Fatal(err)
	}
	if got := node(t, r, "pipeline.plain").Value; got != value {
		t.Errorf("plain = %q", got)
	}
}

// TestSecretInRenderError: an error of the Jinja engine over a secret is told with the mask.
func TestSecretInRenderError(t *testing.T) {
	path := write(t, "p.yaml", secretHeader+"pipeline:\n  a: {{ password | local_file }}\n")
	_, err := render(t, path, params("password", "/no/such/Zq7-secret"))
	if err == nil || strings.Contains(err.Error(), "Zq7") || !strings.Contains(err.Error(), "<secret:password>") {
		t.Errorf("want the error with the mask, got %v", err)
	}
}
