package runner_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	_ "github.com/sluicehq/sluice/connectors/all"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/runner"
	_ "github.com/sluicehq/sluice/transforms/all"
)

// TestBadPipelines holds the corpus of broken pipelines in testdata/bad: each must fail
// validation with exactly the listed problems, at the listed line and column.
func TestBadPipelines(t *testing.T) {
	files, err := filepath.Glob("../testdata/bad/*.yaml")
	if err != nil || len(files) < 30 {
		t.Fatalf("want at least 30 files in testdata/bad, found %d (%v)", len(files), err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(strings.TrimSuffix(name, ".yaml"), func(t *testing.T) {
			want, ok := badWant[name]
			if !ok {
				t.Fatalf("no expectation for %s in badWant", name)
			}
			got := problems(t, path)
			if !slices.Equal(got, want) {
				t.Errorf("%s:\ngot\n\t%s\nwant\n\t%s", name, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
			}
		})
	}
	for name := range badWant {
		if _, err := os.Stat(filepath.Join("../testdata/bad", name)); err != nil {
			t.Errorf("badWant lists %s, which is not in testdata/bad", name)
		}
	}
}

// problems validates path and returns each problem as "line:col: summary".
func problems(t *testing.T, path string) []string {
	t.Helper()
	_, err := runner.Load(path)
	if err == nil {
		t.Fatalf("%s validated, but it is broken", path)
	}
	var list diag.List
	if !errors.As(err, &list) {
		t.Fatalf("%s: error is not a list of positioned problems: %v", path, err)
	}
	var out []string
	for _, d := range list {
		if d.File != path {
			t.Errorf("problem names file %q, want %q", d.File, path)
		}
		s := strings.TrimPrefix(d.Error(), path+":")
		s, _, _ = strings.Cut(s, "\n\thint:")
		if strings.Contains(s, "interface {}") || strings.Contains(s, "goroutine") {
			t.Errorf("problem shows Go internals: %s", s)
		}
		out = append(out, s)
	}
	return out
}

var badWant = map[string][]string{
	"ambiguous_input.yaml": {
		"12:14: ambiguous transform \"Create\" in the input of Filter: it matches the transforms at lines 3, 7",
	},
	"async_with_commit_sink.yaml": {
		"7:7: WriteToJson delivers its rows when it commits, so with async_progress_tracking it would show nothing between two progress writes (every 30s)",
	},
	"bigquery_position_column_taken.yaml": {
		"10:34: source_position_columns: the rows already have a field \"sluice_offset\"; rename it",
	},
	"async_with_exactly_once.yaml": {
		"8:28: async_progress_tracking needs delivery: at_least_once: after a crash the progress written in the background may be behind the output, so records would be written again",
	},
	"bad_delivery.yaml": {
		"8:13: \"delivery\" must be one of exactly_once, at_least_once, not \"exactly_twice\" (did you mean \"exactly_once\"?)",
	},
	"bad_duration.yaml": {
		"9:15: \"size\": \"10 minutes\" is not a duration: write a number with a unit (ms, s, m, h, d), e.g. 10s or 1.5m",
	},
	"follow_schema_updates_without_registry.yaml": {
		"10:30: ReadFromKafka: follow_schema_updates follows the newer versions of a schema registry subject: it needs format AVRO and confluent_schema_registry_url",
	},
	"bad_enum.yaml": {
		"9:16: \"level\" must be one of DEBUG, INFO, WARN, WARNING, ERROR, not \"LOUD\"",
	},
	"bad_window_type.yaml": {
		"8:15: \"type\" must be one of global, fixed, sliding, sessions, not \"tumbling\"",
	},
	"block_expression_error.yaml": {
		"12:17: unknown field \"shipping\" in the expression",
	},
	"chain_with_input.yaml": {
		"8:14: Filter has an input, but in a chain each transform consumes the previous one",
	},
	"cycle.yaml": {
		"3:7: the inputs form a cycle: a -> b -> a",
	},
	"drop_unknown_field.yaml": {
		"10:16: cannot drop unknown field \"nots\" (did you mean \"note\"?)",
	},
	"duplicate_names.yaml": {
		"8:13: duplicate transform name \"input\" (first used at line 3)",
	},
	"empty.yaml": {
		"1:1: the file is empty: a pipeline file needs a pipeline: key",
	},
	"explode_non_array.yaml": {
		"9:18: cannot explode field \"name\": it is a string, not an array",
	},
	"expression_syntax_error.yaml": {
		"9:21: unexpected \">\"",
	},
	"extra_transforms_in_composite.yaml": {
		"7:5: extra_transforms is only for chain pipelines; in a composite pipeline list them under transforms",
	},
	"filter_not_boolean.yaml": {
		"9:15: keep must be a boolean expression, but \"amount + 1\" is an integer",
	},
	"missing_required_config.yaml": {
		"6:7: ReadFromJson needs config key \"path\"",
	},
	"no_pipeline.yaml": {
		"1:1: the file has no pipeline: key",
	},
	"python_unknown_module.yaml": {
		"13:22: ModuleNotFoundError: no module named \"numpy\": sluice's Python provides apache_beam, datetime, json, math, re, time, typing",
	},
	"self_input.yaml": {
		"8:14: Filter 'loop' cannot consume its own output",
	},
	"sessions_without_gap.yaml": {
		"4:5: sessions windowing needs \"gap\"",
	},
	"several_outputs_bare_reference.yaml": {
		"13:14: Partition 'split' has several outputs (a, b): name one, e.g. split.a",
	},
	"several_problems.yaml": {
		"9:15: unknown field \"idd\" in the expression (did you mean \"id\"?)",
		"16:9: unknown config key \"prefx\" in LogForTesting (did you mean \"prefix\"?)",
	},
	"sliding_period_longer_than_size.yaml": {
		"10:17: sliding windowing period (1m0s) is longer than its size (10s): records between windows would be lost",
	},
	"source_with_input.yaml": {
		"9:14: Create 'b' is a source and takes no input",
	},
	"transform_without_input.yaml": {
		"6:7: Filter needs an input",
	},
	"type_mismatch.yaml": {
		"10:22: invalid operation: - (mismatched types string and integer)",
	},
	"unconsumed_error_output.yaml": {
		"11:11: unconsumed error output MapToFields.errors: failed records would be lost",
	},
	"unknown_config_key.yaml": {
		"9:9: unknown config key \"kep\" in Filter (did you mean \"keep\"?)",
	},
	"unknown_field_in_expression.yaml": {
		"11:18: unknown field \"amout\" in the expression (did you mean \"amount\"?)",
	},
	"unknown_input.yaml": {
		"8:14: unknown transform \"numbrs\" in the input of Filter (did you mean \"numbers\"?)",
	},
	"unknown_output_tag.yaml": {
		"12:14: MapToFields 'double' has no output \"bad\" (its outputs: good)",
	},
	"unknown_pipeline_key.yaml": {
		"3:3: unknown key \"transfroms\" in pipeline (did you mean \"transforms\"?)",
	},
	"unknown_transform.yaml": {
		"7:13: unknown transform type \"MapToFeilds\" (did you mean \"MapToFields\"?)",
	},
	"cycle_and_others.yaml": {
		"3:7: the inputs form a cycle: a -> b -> a",
		"5:14: Create 'a' is a source and takes no input",
		"11:13: unknown transform type \"Frob\"",
	},
	"unknown_pipeline_key_and_others.yaml": {
		"3:3: unknown key \"windowng\" in pipeline (did you mean \"windowing\"?)",
		"7:13: unknown transform type \"Frob\"",
		"9:13: \"delivery\" must be one of exactly_once, at_least_once, not \"exactly_onec\" (did you mean \"exactly_once\"?)",
	},
	"dependencies.yaml": {
		"8:7: dependencies: sluice installs no packages, so it cannot give this transform the ones it lists",
		"12:14: unknown field \"nope\" in the expression",
	},
	"every_problem_at_once.yaml": {
		"8:13: unknown transform type \"MapToFeilds\" (did you mean \"MapToFields\"?)",
		"10:14: unknown transform \"srcc\" in the input of MapToFeilds 'm' (did you mean \"src\"?)",
		"15:7: unknown key \"confg\" in transform (did you mean \"config\"?)",
		"16:13: unknown transform type \"Frobnicate\"",
		"20:25: unexpected end of the expression",
		"22:20: unknown transform \"nowhere\" in the input of Filter 'Filter#2'",
		"23:31: unknown config key \"sneaky\" in Filter 'Filter#2'",
	},
	"unknown_transform_key.yaml": {
		"5:7: unknown key \"confg\" in transform (did you mean \"config\"?)",
	},
	"unsupported_language.yaml": {
		"9:19: language \"ruby\" is not supported: sluice evaluates expr-lang expressions (language generic or expr), Python (language python), JavaScript (language javascript) and SQL (language sql)",
	},
	"write_text_two_fields.yaml": {
		"8:5: WriteToText writes one string per line, but its input \"Create\" has rows {a string, b string}",
	},
	"wrong_config_type.yaml": {
		"10:24: \"cross_product\" must be true or false, not \"yes please\"",
	},
	"yaml_syntax_error.yaml": {
		"5:7: invalid YAML: did not find expected ',' or ']'",
	},
	"zero_checkpoint_interval.yaml": {
		"8:24: checkpoint_interval must be longer than zero",
	},
}
