package runner

import (
	"reflect"

	"github.com/sluicehq/sluice/component"
)

// FormatSchema returns the JSON Schema of the pipeline file format, generated from the
// registered components' config types: each transform's config is typed by its type's config
// struct, every key with its description and default. Beam's test files (pipelines:, a
// list of pipeline files) are accepted too.
func FormatSchema() map[string]any {
	specs := component.All()
	var variants []any
	types := make([]string, len(specs))
	summaries := make([]string, len(specs))
	for i, s := range specs {
		types[i], summaries[i] = s.Name, s.Summary
		variants = append(variants, map[string]any{
			"if": map[string]any{
				"required":   []string{"type"},
				"properties": map[string]any{"type": map[string]any{"const": s.Name}},
			},
			"then": map[string]any{"properties": map[string]any{"config": s.ConfigSchema()}},
		})
	}
	transform := component.JSONSchema(reflect.TypeFor[transformSpec]())
	// enumDescriptions is read by VS Code's and yaml-language-server's completion; validators
	// ignore it.
	transform["properties"].(map[string]any)["type"] = map[string]any{"enum": types, "enumDescriptions": summaries,
		"description": "The transform type: a source, a transform or a sink (sluice schema TYPE prints one type's config)."}
	transform["allOf"] = variants
	// A nested chain or composite (docs/structure.md) may stand wherever a transform does.
	item := map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/transform"}, map[string]any{"$ref": "#/$defs/composite"}}}
	transforms := map[string]any{"type": "array", "items": item}
	nested := func(spec map[string]any) map[string]any {
		props := spec["properties"].(map[string]any)
		for _, k := range []string{"source", "sink"} {
			props[k] = map[string]any{"$ref": "#/$defs/transform", "description": props[k].(map[string]any)["description"]}
		}
		for _, k := range []string{"transforms", "extra_transforms"} {
			props[k] = map[string]any{"$ref": "#/$defs/transforms", "description": props[k].(map[string]any)["description"]}
		}
		return spec
	}
	pipeline := nested(component.JSONSchema(reflect.TypeFor[pipelineSpec]()))
	composite := nested(component.JSONSchema(reflect.TypeFor[compositeSpec]()))
	options := component.JSONSchema(reflect.TypeFor[Options]())
	options["additionalProperties"] = true // unknown runner options are a warning, as Beam tolerates them
	options["description"] = "Runner options; unknown keys are accepted with a warning."
	// A mapping, or a bare list of transforms: properties apply to the one, items to the
	// other, which keeps an editor's messages to the shape the user wrote.
	pipeline["type"] = []string{"object", "array"}
	pipeline["items"] = item
	pipeline["description"] = "The pipeline: a mapping with transforms, or a bare list of transforms (a composite)."
	file := map[string]any{
		"pipeline": pipeline,
		"options":  map[string]any{"$ref": "#/$defs/options"},
	}
	return map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"title":       "sluice pipeline",
		"description": "A Beam YAML pipeline as sluice runs it (FORMAT.md); unknown top-level keys are accepted with a warning.",
		"type":        "object",
		"anyOf":       []any{map[string]any{"required": []string{"pipeline"}}, map[string]any{"required": []string{"pipelines"}}},
		"properties": map[string]any{
			"pipeline": file["pipeline"],
			"options":  file["options"],
			"tests":    map[string]any{"type": "array", "description": "Whole-pipeline tests: mock_outputs and expected_inputs per test (sluice test; docs/testing.md)."},
			"template": map[string]any{"type": "object", "description": "A Dataflow-style template header: name, description, parameters (docs/templates.md)."},
			"pipelines": map[string]any{
				"type":        "array",
				"description": "Beam's test file format: pipelines, each a pipeline: with its options: (sluice test).",
				"items":       map[string]any{"type": "object", "required": []string{"pipeline"}, "properties": file},
			},
		},
		"$defs": map[string]any{"transform": transform, "composite": composite, "transforms": transforms, "options": options},
	}
}

// ComponentSchema returns the JSON Schema of one component type's config (sluice schema
// TYPE), or false when no component has that name.
func ComponentSchema(name string) (map[string]any, bool) {
	s, ok := component.Lookup(name)
	if !ok {
		return nil, false
	}
	out := s.ConfigSchema()
	out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	return out, true
}
