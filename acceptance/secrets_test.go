package acceptance

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretsNeverShown runs the binary and greps everything it prints for the secrets.
func TestSecretsNeverShown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "p.yaml")
	writeFile(t, p, `template:
  parameters:
    - name: password
      type: password
    - name: group
pipeline:
  type: chain
  transforms:
    - type: Create
      config: {elements: [{a: 1}]}
    - type: LogForTesting
      name: "{{ password }}"
      config:
        level: "{{ group }}"
`)
	secretFile := filepath.Join(dir, "group.txt")
	writeFile(t, secretFile, "from-a-file-Zq7\n")
	env := append(os.Environ(), "SLUICE_TEST_PW=from-the-env-Xk9")
	for _, args := range [][]string{
		{"render", p, "-p", "password=hunter2-Pw", "-p", "group=${file:" + secretFile + "}"},
		{"render", p, "-p", "password=${env:SLUICE_TEST_PW}", "-p", "group=x"},
		{"validate", p, "-p", "password=hunter2-Pw", "-p", "group=${file:" + secretFile + "}"},
		{"run", p, "-p", "password=${env:SLUICE_TEST_PW}", "-p", "group=${file:" + secretFile + "}"},
		{"run", p, "-p", "password=hunter2-Pw", "-p", "group=info", "--log-level", "debug"},
	} {
		cmd := exec.Command(binary, args...)
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		for _, s := range []string{"hunter2-Pw", "from-the-env-Xk9", "from-a-file-Zq7"} {
			if strings.Contains(string(out), s) {
				t.Errorf("sluice %s shows the secret %q:\n%s", strings.Join(args, " "), s, out)
			}
		}
		if args[0] == "render" && !strings.Contains(string(out), `name: "<secret:password>"`) && !strings.Contains(string(out), `name: "${env:SLUICE_TEST_PW}"`) {
			t.Errorf("render must show the mask:\n%s", out)
		}
		if args[0] == "validate" && !strings.Contains(string(out), `"level" must be one of`) {
			t.Errorf("validate must report the bad level (masked):\n%s", out)
		}
	}
}
