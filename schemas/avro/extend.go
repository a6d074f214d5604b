package avro

import (
	"encoding/json"
	"fmt"
	"slices"
)

// Extend returns the reader's record schema (JSON text) with the top-level fields of the
// writer's record schema that it lacks (by name or alias) appended, in the writer's order, and
// their names; text is reader itself when none is missing. An added field without a default
// gets null as its default (its type made a union with null first), so that values of older
// writers, which lack it, still read; a field with a default keeps it. This is how a reader
// follows a subject whose newer versions add fields (docs/schemas.md, "Following a subject").
func Extend(reader, writer string) (text string, added []string, err error) {
	var r, w map[string]json.RawMessage
	if err := json.Unmarshal([]byte(reader), &r); err != nil {
		return "", nil, fmt.Errorf("the reader's avro schema: %w", err)
	}
	if err := json.Unmarshal([]byte(writer), &w); err != nil {
		return "", nil, fmt.Errorf("the writer's avro schema: %w", err)
	}
	var rFields, wFields []map[string]json.RawMessage
	if err := json.Unmarshal(r["fields"], &rFields); err != nil {
		return "", nil, fmt.Errorf("the reader's avro schema is not a record: %w", err)
	}
	if err := json.Unmarshal(w["fields"], &wFields); err != nil {
		return "", nil, fmt.Errorf("the writer's avro schema is not a record: %w", err)
	}
	known := map[string]bool{}
	for _, f := range rFields {
		known[stringOf(f["name"])] = true
		var aliases []string
		_ = json.Unmarshal(f["aliases"], &aliases)
		for _, a := range aliases {
			known[a] = true
		}
	}
	for _, f := range wFields {
		name := stringOf(f["name"])
		if known[name] {
			continue
		}
		if _, ok := f["default"]; !ok {
			f["type"], f["default"] = nullFirst(f["type"]), json.RawMessage("null")
		}
		rFields = append(rFields, f)
		added = append(added, name)
	}
	if len(added) == 0 {
		return reader, nil, nil
	}
	if r["fields"], err = json.Marshal(rFields); err != nil {
		return "", nil, err
	}
	out, err := json.Marshal(r)
	return string(out), added, err
}

// nullFirst returns the Avro type t as a union whose first branch is null.
func nullFirst(t json.RawMessage) json.RawMessage {
	var union []json.RawMessage
	if json.Unmarshal(t, &union) != nil {
		union = []json.RawMessage{t}
	}
	union = slices.DeleteFunc(union, func(b json.RawMessage) bool { return stringOf(b) == "null" })
	out, _ := json.Marshal(append([]json.RawMessage{json.RawMessage(`"null"`)}, union...))
	return out
}

func stringOf(b json.RawMessage) string {
	var s string
	_ = json.Unmarshal(b, &s)
	return s
}
