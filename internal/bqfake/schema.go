package bqfake

import (
	"fmt"
	"strings"

	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	bq "google.golang.org/api/bigquery/v2"
)

// Column types, by the names the v2 REST API returns.
const (
	typeString     = "STRING"
	typeBytes      = "BYTES"
	typeInteger    = "INTEGER"
	typeFloat      = "FLOAT"
	typeBoolean    = "BOOLEAN"
	typeTimestamp  = "TIMESTAMP"
	typeDate       = "DATE"
	typeTime       = "TIME"
	typeDatetime   = "DATETIME"
	typeNumeric    = "NUMERIC"
	typeBigNumeric = "BIGNUMERIC"
	typeGeography  = "GEOGRAPHY"
	typeJSON       = "JSON"
	typeRecord     = "RECORD"
)

// Column modes.
const (
	modeNullable = "NULLABLE"
	modeRequired = "REQUIRED"
	modeRepeated = "REPEATED"
)

// typeAliases maps every accepted spelling to the name the REST API returns.
var typeAliases = map[string]string{
	"STRING": typeString, "BYTES": typeBytes,
	"INTEGER": typeInteger, "INT64": typeInteger,
	"FLOAT": typeFloat, "FLOAT64": typeFloat,
	"BOOLEAN": typeBoolean, "BOOL": typeBoolean,
	"TIMESTAMP": typeTimestamp, "DATE": typeDate, "TIME": typeTime, "DATETIME": typeDatetime,
	"NUMERIC": typeNumeric, "DECIMAL": typeNumeric,
	"BIGNUMERIC": typeBigNumeric, "BIGDECIMAL": typeBigNumeric,
	"GEOGRAPHY": typeGeography, "JSON": typeJSON,
	"RECORD": typeRecord, "STRUCT": typeRecord,
}

// column is one field of a table schema.
type column struct {
	name   string
	typ    string
	mode   string
	fields []*column
}

func (c *column) repeated() bool { return c.mode == modeRepeated }

// normalizeSchema checks a REST schema, rewrites its types and modes to the canonical
// names in place (what tables.get then returns), and returns its columns.
func normalizeSchema(fields []*bq.TableFieldSchema, path string) ([]*column, error) {
	seen := map[string]bool{}
	cols := make([]*column, 0, len(fields))
	for _, f := range fields {
		if f == nil || f.Name == "" {
			return nil, fmt.Errorf("a field in %s has no name", orRoot(path))
		}
		lower := strings.ToLower(f.Name)
		if seen[lower] {
			return nil, fmt.Errorf("duplicate field name %s in %s", f.Name, orRoot(path))
		}
		seen[lower] = true
		typ, ok := typeAliases[strings.ToUpper(f.Type)]
		if !ok {
			return nil, fmt.Errorf("field %s has type %q, which bqfake does not support", path+f.Name, f.Type)
		}
		mode := strings.ToUpper(f.Mode)
		switch mode {
		case "":
			mode = modeNullable
		case modeNullable, modeRequired, modeRepeated:
		default:
			return nil, fmt.Errorf("field %s has invalid mode %q", path+f.Name, f.Mode)
		}
		f.Type, f.Mode = typ, mode
		c := &column{name: f.Name, typ: typ, mode: mode}
		if typ == typeRecord {
			if len(f.Fields) == 0 {
				return nil, fmt.Errorf("field %s is a RECORD without fields", path+f.Name)
			}
			sub, err := normalizeSchema(f.Fields, path+f.Name+".")
			if err != nil {
				return nil, err
			}
			c.fields = sub
		} else if len(f.Fields) > 0 {
			return nil, fmt.Errorf("field %s has nested fields but type %s", path+f.Name, typ)
		}
		cols = append(cols, c)
	}
	return cols, nil
}

func orRoot(path string) string {
	if path == "" {
		return "the schema"
	}
	return strings.TrimSuffix(path, ".")
}

// storageTypes maps REST column types to the Storage API's TableFieldSchema types.
var storageTypes = map[string]storagepb.TableFieldSchema_Type{
	typeString: storagepb.TableFieldSchema_STRING, typeBytes: storagepb.TableFieldSchema_BYTES,
	typeInteger: storagepb.TableFieldSchema_INT64, typeFloat: storagepb.TableFieldSchema_DOUBLE,
	typeBoolean: storagepb.TableFieldSchema_BOOL, typeTimestamp: storagepb.TableFieldSchema_TIMESTAMP,
	typeDate: storagepb.TableFieldSchema_DATE, typeTime: storagepb.TableFieldSchema_TIME,
	typeDatetime: storagepb.TableFieldSchema_DATETIME, typeNumeric: storagepb.TableFieldSchema_NUMERIC,
	typeBigNumeric: storagepb.TableFieldSchema_BIGNUMERIC, typeGeography: storagepb.TableFieldSchema_GEOGRAPHY,
	typeJSON: storagepb.TableFieldSchema_JSON, typeRecord: storagepb.TableFieldSchema_STRUCT,
}

var storageModes = map[string]storagepb.TableFieldSchema_Mode{
	modeNullable: storagepb.TableFieldSchema_NULLABLE,
	modeRequired: storagepb.TableFieldSchema_REQUIRED,
	modeRepeated: storagepb.TableFieldSchema_REPEATED,
}

// storageSchema is the table schema as the Storage API reports it (WriteStream.table_schema).
func storageSchema(cols []*column) *storagepb.TableSchema {
	return &storagepb.TableSchema{Fields: storageFields(cols)}
}

func storageFields(cols []*column) []*storagepb.TableFieldSchema {
	out := make([]*storagepb.TableFieldSchema, len(cols))
	for i, c := range cols {
		out[i] = &storagepb.TableFieldSchema{
			Name:   c.name,
			Type:   storageTypes[c.typ],
			Mode:   storageModes[c.mode],
			Fields: storageFields(c.fields),
		}
	}
	return out
}

// checkPartitioning checks time partitioning and clustering against the columns, as
// tables.insert does.
func checkPartitioning(t *bq.Table, cols []*column) error {
	top := map[string]*column{}
	for _, c := range cols {
		top[strings.ToLower(c.name)] = c
	}
	if tp := t.TimePartitioning; tp != nil {
		switch tp.Type {
		case "DAY", "HOUR", "MONTH", "YEAR":
		default:
			return fmt.Errorf("invalid timePartitioning.type %q", tp.Type)
		}
		if tp.Field != "" {
			c := top[strings.ToLower(tp.Field)]
			if c == nil {
				return fmt.Errorf("the field specified for partitioning cannot be found in the schema: %s", tp.Field)
			}
			if c.repeated() || (c.typ != typeTimestamp && c.typ != typeDate && c.typ != typeDatetime) {
				return fmt.Errorf("partitioning field %s must be a top-level TIMESTAMP, DATE or DATETIME field", tp.Field)
			}
		}
	}
	if cl := t.Clustering; cl != nil {
		if len(cl.Fields) > 4 {
			return fmt.Errorf("too many clustering fields: %d, at most 4", len(cl.Fields))
		}
		for _, name := range cl.Fields {
			c := top[strings.ToLower(name)]
			if c == nil {
				return fmt.Errorf("the field specified for clustering cannot be found in the schema: %s", name)
			}
			if c.repeated() || c.typ == typeRecord || c.typ == typeJSON || c.typ == typeFloat {
				return fmt.Errorf("field %s of type %s %s cannot be used for clustering", name, c.mode, c.typ)
			}
		}
	}
	return nil
}
