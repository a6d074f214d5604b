package bqfake

import (
	"fmt"
	"strings"

	"cloud.google.com/go/bigquery/storage/apiv1/storagepb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/sluicehq/sluice/internal/wiretype"
)

// writerSchema is a writer's proto descriptor bound to one table's columns. Rows are kept
// serialized next to a pointer to it and decoded only when read.
type writerSchema struct {
	tbl  *table
	desc protoreflect.MessageDescriptor
	plan *msgPlan
}

// schemaKey caches compiled writer schemas per table and descriptor.
type schemaKey struct {
	tbl  *table
	desc string // deterministic serialization of the DescriptorProto
}

// msgPlan binds one proto message to the columns of a table or RECORD column.
type msgPlan struct {
	dense  []*fieldPlan // by field number, when numbers are small
	sparse map[protowire.Number]*fieldPlan

	reqNames      []string // REQUIRED columns bound to a field; index = bit in the seen set
	alwaysMissing []string // REQUIRED columns no proto field maps to

	cols   []*column
	colFD  []protoreflect.FieldDescriptor // per column; nil where the writer has no field
	colSub []*msgPlan
}

// fieldPlan says how to check one proto field's values on the wire.
type fieldPlan struct {
	path  string
	col   *column
	kind  protoreflect.Kind
	wire  protowire.Type
	list  bool
	check valueCheck
	req   int // bit in msgPlan's seen set, or -1
	sub   *msgPlan
}

// valueCheck is the per-value validation a field needs beyond its wire type.
type valueCheck uint8

const (
	checkNone valueCheck = iota
	checkUTF8
	checkJSON
	checkDateInt
	checkTimestampInt
	checkDatetimeInt
	checkTimeInt
	checkFinite       // NUMERIC from a float
	checkNumericBytes // the bytes encoding of NUMERIC and BIGNUMERIC
	checkParse        // a string that must parse as the column's type
)

// schemaError is a writer schema the table cannot accept; it fails the append with
// INVALID_ARGUMENT, and carries a StorageError code where the service defines one.
type schemaError struct {
	code storagepb.StorageError_StorageErrorCode
	msg  string
}

func (e *schemaError) Error() string { return e.msg }

// compileWriterSchema builds the descriptor of a writer schema (a self-contained proto2
// DescriptorProto, as managedwriter/adapt.NormalizeDescriptor makes) and binds it to cols.
func compileWriterSchema(dp *descriptorpb.DescriptorProto, cols []*column) (*writerSchema, error) {
	if dp == nil || dp.GetName() == "" {
		return nil, &schemaError{msg: "Invalid proto schema: the writer schema has no proto_descriptor"}
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("bqfake/writer_schema.proto"),
		Syntax:      proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{dp},
	}
	fd, err := protodesc.NewFile(fdp, new(protoregistry.Files))
	if err != nil {
		return nil, &schemaError{msg: fmt.Sprintf("Invalid proto schema: %v", err)}
	}
	md := fd.Messages().Get(0)
	plan, err := bindMessage(md, cols, "")
	if err != nil {
		return nil, err
	}
	return &writerSchema{desc: md, plan: plan}, nil
}

// bindMessage maps a message's fields to columns by name, case-insensitively, as the
// service does.
func bindMessage(md protoreflect.MessageDescriptor, cols []*column, path string) (*msgPlan, error) {
	byName := make(map[string]int, len(cols))
	for i, c := range cols {
		byName[strings.ToLower(c.name)] = i
	}
	p := &msgPlan{
		cols:   cols,
		colFD:  make([]protoreflect.FieldDescriptor, len(cols)),
		colSub: make([]*msgPlan, len(cols)),
	}
	plans := make([]*fieldPlan, len(cols))
	var extra []string
	maxNum := protowire.Number(0)
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		ci, ok := byName[strings.ToLower(string(fd.Name()))]
		if !ok {
			extra = append(extra, path+string(fd.Name()))
			continue
		}
		if p.colFD[ci] != nil {
			return nil, &schemaError{msg: fmt.Sprintf("Invalid proto schema: fields %s and %s both map to column %s",
				p.colFD[ci].Name(), fd.Name(), path+cols[ci].name)}
		}
		fp, err := bindField(fd, cols[ci], path+cols[ci].name)
		if err != nil {
			return nil, err
		}
		p.colFD[ci], p.colSub[ci], plans[ci] = fd, fp.sub, fp
		maxNum = max(maxNum, fd.Number())
	}
	if len(extra) > 0 {
		return nil, &schemaError{
			code: storagepb.StorageError_SCHEMA_MISMATCH_EXTRA_FIELDS,
			msg:  "Input schema has more fields than BigQuery schema, extra fields: '" + strings.Join(extra, ",") + "'",
		}
	}
	if maxNum <= 1024 {
		p.dense = make([]*fieldPlan, maxNum+1)
	} else {
		p.sparse = map[protowire.Number]*fieldPlan{}
	}
	for ci, fp := range plans {
		if fp == nil {
			if cols[ci].mode == modeRequired {
				p.alwaysMissing = append(p.alwaysMissing, path+cols[ci].name)
			}
			continue
		}
		// A field with a declared default is never absent: the service applies proto2
		// defaults (managedwriter/adapt declares them for proto3's implicit presence).
		if cols[ci].mode == modeRequired && !p.colFD[ci].HasDefault() {
			fp.req = len(p.reqNames)
			p.reqNames = append(p.reqNames, fp.path)
		}
		if p.dense != nil {
			p.dense[p.colFD[ci].Number()] = fp
		} else {
			p.sparse[p.colFD[ci].Number()] = fp
		}
	}
	return p, nil
}

func (p *msgPlan) field(n protowire.Number) *fieldPlan {
	if p.dense != nil {
		if int(n) < len(p.dense) {
			return p.dense[n]
		}
		return nil
	}
	return p.sparse[n]
}

// kindsFor lists the proto kinds each column type accepts, after the Storage Write API's
// data type conversions (https://cloud.google.com/bigquery/docs/write-api#data_type_conversions).
var kindsFor = map[string][]protoreflect.Kind{
	typeString:     {protoreflect.StringKind, protoreflect.EnumKind},
	typeBytes:      {protoreflect.BytesKind, protoreflect.StringKind},
	typeInteger:    {protoreflect.Int64Kind, protoreflect.Int32Kind, protoreflect.Uint32Kind, protoreflect.Sint64Kind, protoreflect.Sint32Kind, protoreflect.Sfixed64Kind, protoreflect.Sfixed32Kind, protoreflect.Fixed32Kind, protoreflect.EnumKind},
	typeFloat:      {protoreflect.DoubleKind, protoreflect.FloatKind},
	typeBoolean:    {protoreflect.BoolKind, protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind},
	typeTimestamp:  {protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind, protoreflect.StringKind},
	typeDate:       {protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Sint32Kind, protoreflect.Sint64Kind, protoreflect.StringKind},
	typeDatetime:   {protoreflect.Int64Kind, protoreflect.StringKind},
	typeTime:       {protoreflect.Int64Kind, protoreflect.StringKind},
	typeNumeric:    {protoreflect.BytesKind, protoreflect.StringKind, protoreflect.Int64Kind, protoreflect.Int32Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.DoubleKind, protoreflect.FloatKind},
	typeBigNumeric: {protoreflect.BytesKind, protoreflect.StringKind, protoreflect.Int64Kind, protoreflect.Int32Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind, protoreflect.DoubleKind, protoreflect.FloatKind},
	typeGeography:  {protoreflect.StringKind},
	typeJSON:       {protoreflect.StringKind},
	typeRecord:     {protoreflect.MessageKind},
}

func bindField(fd protoreflect.FieldDescriptor, c *column, path string) (*fieldPlan, error) {
	mismatch := func() error {
		card := ""
		if fd.IsList() {
			card = "repeated "
		}
		return &schemaError{msg: fmt.Sprintf("The proto field mismatched with BigQuery field at %s, the proto field type %s%s, BigQuery field type %s %s",
			path, card, fd.Kind(), c.mode, c.typ)}
	}
	if fd.IsMap() || fd.IsList() != c.repeated() {
		return nil, mismatch()
	}
	kind := fd.Kind()
	ok := false
	for _, k := range kindsFor[c.typ] {
		ok = ok || k == kind
	}
	if !ok {
		return nil, mismatch()
	}
	fp := &fieldPlan{path: path, col: c, kind: kind, list: fd.IsList(), req: -1, wire: wiretype.Of(kind)}
	switch {
	case c.typ == typeRecord:
		sub, err := bindMessage(fd.Message(), c.fields, path+".")
		if err != nil {
			return nil, err
		}
		fp.sub = sub
	case c.typ == typeJSON:
		fp.check = checkJSON
	case kind == protoreflect.StringKind && c.typ != typeString && c.typ != typeBytes && c.typ != typeGeography:
		fp.check = checkParse
	case kind == protoreflect.StringKind:
		fp.check = checkUTF8
	case c.typ == typeDate:
		fp.check = checkDateInt
	case c.typ == typeTimestamp:
		fp.check = checkTimestampInt
	case c.typ == typeDatetime:
		fp.check = checkDatetimeInt
	case c.typ == typeTime:
		fp.check = checkTimeInt
	case (c.typ == typeNumeric || c.typ == typeBigNumeric) && kind == protoreflect.BytesKind:
		fp.check = checkNumericBytes
	case (c.typ == typeNumeric || c.typ == typeBigNumeric) && (kind == protoreflect.DoubleKind || kind == protoreflect.FloatKind):
		fp.check = checkFinite
	}
	return fp, nil
}
