package mapping

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/component"
)

func TestLogForTesting(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	defer slog.SetDefault(old)

	for _, tt := range []struct {
		config string
		logged bool
	}{{"config: {level: warn, prefix: 'row: '}", true}, {"config: {prefix: 'row: '}", false}} {
		buf.Reset()
		tr, _ := mustBuild(t, "LogForTesting", tt.config, orders)
		in := batch(orders, orderRows()...)
		out, err := run(t, tr, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := out[component.Main]; len(got) != 1 || got[0] != in {
			t.Errorf("%s: rows not passed on unchanged: %v", tt.config, got)
		}
		logged := buf.String()
		if !tt.logged {
			if logged != "" {
				t.Errorf("logged below the level: %s", logged)
			}
			continue
		}
		if n := strings.Count(logged, "\n"); n != 3 {
			t.Errorf("%d lines logged", n)
		}
		want := `level=WARN msg="row: {\"id\":1,\"name\":\"apple\",\"amount\":3,\"price\":0.5,\"tags\":[\"fruit\",\"red\"]}" transform=step`
		if !strings.Contains(logged, want) {
			t.Errorf("log\n%s\nlacks\n%s", logged, want)
		}
	}
	if got := buildError(t, "LogForTesting", "config: {level: loud}", orders); !strings.HasPrefix(got, `p.yaml:1:17: "level" must be one of DEBUG, INFO, WARN, WARNING, ERROR, not "loud"`) {
		t.Errorf("error %s", got)
	}
}
