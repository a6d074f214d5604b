package xp

import (
	"fmt"
	"testing"

	"github.com/nikolalohinski/gonja/v2"
	"github.com/nikolalohinski/gonja/v2/config"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/loaders"
)

func TestX(t *testing.T) {
	cfg := config.New()
	cfg.StrictUndefined = true
	cfg.KeepTrailingNewline = true
	for _, src := range []string{
		"a: 1\nb: {{ x }}\n",
		"a: 1\nb: {{ y | default('J') }}\n{% if z %}c{% endif %}\n",
		"a: 1\nb: {{ y | default('J') }}\n{% if zz is defined %}c{% endif %}\n",
		"a: 1\n\nb: {{ x \n",
		"a: 1\nb: {% iff x %}\n",
		"a: {{ m | tojson }} {{ s | indent(2) }} {{ s | upper }}\n{% include 'inc.yaml' %}\n",
	} {
		ld, _ := loaders.NewFileSystemLoader("/tmp/gx")
		mem := map[string]string{"root": src}
		_ = mem
		sl, _ := loaders.NewShiftedLoader("/tmp/gx/root.yaml", stringsReader(src), ld)
		tpl, err := exec.NewTemplate("/tmp/gx/root.yaml", cfg, sl, gonja.DefaultEnvironment)
		if err != nil {
			fmt.Printf("PARSE ERR: %v\n", err)
			continue
		}
		out, err := tpl.ExecuteToString(exec.NewContext(map[string]any{"m": map[string]any{"k": "v"}, "s": "l1\nl2"}))
		fmt.Printf("OUT %q ERR %v\n", out, err)
	}
}
