package iceberg

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/schemas"
)

// UpsertConfig is WriteToIceberg's `upsert:` block: the table keeps the latest row per key.
type UpsertConfig struct {
	Key    []string        `yaml:"key" required:"true" doc:"The key columns: the table's identifier fields. Each must be a non-nullable column of the rows of a type Iceberg allows as an identifier (boolean, integer, string, bytes, timestamp, date, decimal)."`
	Delete *component.Expr `yaml:"delete" doc:"A boolean expression over the input row: a row for which it is true deletes its key instead of writing the row (e.g. op == 'd')."`
}

// upsertPlan is what building decides for upserts: where the key is in the written rows, and
// which input rows delete their key.
type upsertPlan struct {
	key    []string
	keyIdx []int             // indexes of the key columns in the written rows (plan.rows)
	del    component.RowFunc // over the input row; nil: no row deletes
	pos    diag.Pos          // of upsert.key, for errors found when the table is opened
	plain  bool              // every key column is integer, string or bytes: keyValues decodes keyOf
}

// buildUpsert checks cfg.Upsert against the written rows and returns its plan; nil with
// diagnostics reported when it is wrong.
func buildUpsert(c *component.Context, cfg *WriteConfig, p *plan) *upsertPlan {
	u := cfg.Upsert
	upNode := component.MappingValue(c.Config, "upsert")
	keyNode := component.MappingValue(upNode, "key")
	keyPos := c.KeyPos("upsert")
	if keyNode != nil {
		keyPos = c.At(keyNode)
	}
	itemPos := func(i int) diag.Pos {
		if keyNode != nil && i < len(keyNode.Content) {
			return c.At(keyNode.Content[i])
		}
		return keyPos
	}
	ok := true
	if p.route != nil {
		c.Errorf(c.KeyPos("upsert"), "upsert cannot be combined with routing by field (%s): write one table", cfg.Table)
		ok = false
	}
	if len(u.Key) == 0 {
		c.Errorf(keyPos, "upsert: key must name at least one column of the rows")
		return nil
	}
	up := &upsertPlan{key: u.Key, pos: keyPos}
	seen := map[string]bool{}
	for i, name := range u.Key {
		j, found := p.rows.Index(name)
		switch {
		case !found:
			c.Errorf(itemPos(i), "upsert: key %q is not a field of the rows written%s", name, diag.DidYouMean(name, p.rows.Names()))
			ok = false
			continue
		case seen[name]:
			c.Errorf(itemPos(i), "upsert: key %q is named twice", name)
			ok = false
			continue
		}
		seen[name] = true
		f := p.rows.Fields[j]
		if !identifierKind(f.Type.Kind) {
			c.Errorf(itemPos(i), "upsert: key %q is %s, which cannot be an Iceberg identifier field; use a boolean, integer, string, bytes, timestamp, date or decimal field", name, f.Type)
			ok = false
		}
		if f.Nullable {
			c.Errorf(itemPos(i), "upsert: key %q is nullable; an identifier field must be required: declare it so in the input's schema, or give it a value for every row in a MapToFields (e.g. with ?? and a default)", name)
			ok = false
		}
		up.keyIdx = append(up.keyIdx, j)
	}
	up.plain = !slices.ContainsFunc(up.keyIdx, func(j int) bool {
		k := p.rows.Fields[j].Type.Kind
		return k != schemas.Int64 && k != schemas.String && k != schemas.Bytes
	})
	for i, f := range p.parts {
		if !seen[f.column] {
			c.Errorf(listItemPos(c, "partition_fields", i), "upsert: partition field %s uses column %q, which is not in upsert.key; an upsert table may be partitioned by its key columns only, so that a key's rows stay in one partition", f.name, f.column)
			ok = false
		}
	}
	if u.Delete != nil {
		if c.Exprs == nil {
			c.Errorf(u.Delete.Pos, "upsert: delete expressions are not available here")
			return nil
		}
		fn, typ, err := c.Exprs.Compile(*u.Delete, p.input, "")
		if err != nil {
			c.Diags.Append(u.Delete.Pos, err)
			return nil
		}
		if typ.Kind != schemas.Bool && typ.Kind != schemas.Any {
			c.Errorf(u.Delete.Pos, "upsert: delete must be a boolean expression, but %q gives %s", u.Delete.Text, typ)
			return nil
		}
		up.del = fn
	}
	if !ok {
		return nil
	}
	return up
}

// identifierKind reports whether a field of kind k may be an Iceberg identifier field:
// a primitive that is not floating point.
func identifierKind(k schemas.Kind) bool {
	switch k {
	case schemas.Bool, schemas.Int64, schemas.String, schemas.Bytes, schemas.Timestamp, schemas.Date, schemas.Decimal:
		return true
	}
	return false
}

// withIdentifiers returns sc with the key columns as its identifier fields.
func withIdentifiers(sc *iceberg.Schema, key []string) (*iceberg.Schema, error) {
	ids := make([]int, len(key))
	for i, name := range key {
		f, ok := sc.FindFieldByName(name)
		if !ok {
			return nil, fmt.Errorf("upsert: key %q is not a column", name)
		}
		ids[i] = f.ID
	}
	return iceberg.NewSchemaWithIdentifiers(sc.ID, ids, sc.Fields()...), nil
}

// checkTable checks that an existing table can take upserts by key: format version 2
// or later, the key as its identifier fields, partitioned by key columns only.
func (u *upsertPlan) checkTable(tbl *table.Table) error {
	meta := tbl.Metadata()
	if v := meta.Version(); v < 2 {
		return fmt.Errorf("%s: upsert needs a table of format version 2 or later (for delete files), and this one is version %d: upgrade it with your catalog's tools, or write a new table", u.pos, v)
	}
	sc := tbl.Schema()
	var have []string
	for _, id := range sc.IdentifierFieldIDs {
		if name, ok := sc.FindColumnName(id); ok {
			have = append(have, name)
		}
	}
	if !sameSet(have, u.key) {
		hint := "set them with your catalog's tools, or write a new table"
		if len(have) > 0 {
			hint = "make upsert.key [" + strings.Join(have, ", ") + "]"
		}
		return fmt.Errorf("%s: upsert.key [%s] is not the table's identifier fields [%s]: %s", u.pos, strings.Join(u.key, ", "), strings.Join(have, ", "), hint)
	}
	spec := meta.PartitionSpec()
	for _, f := range spec.Fields() {
		if !slices.Contains(sc.IdentifierFieldIDs, f.SourceID()) {
			return fmt.Errorf("%s: the table is partitioned by %s, which is not a key column; an upsert table may be partitioned by its key columns only", u.pos, f.Name)
		}
	}
	return nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// keyOf appends the key of a written row to dst, encoded as a map key: each value with its
// type and, for text, its length, so that different keys never encode alike.
func (u *upsertPlan) keyOf(dst []byte, row schemas.Row) ([]byte, error) {
	for k, i := range u.keyIdx {
		switch x := row[i].(type) {
		case nil:
			return dst, fmt.Errorf("upsert: key %q is null", u.key[k])
		case int64:
			dst = strconv.AppendInt(append(dst, 'i'), x, 10)
			dst = append(dst, ':')
		case string:
			dst = append(strconv.AppendInt(append(dst, 's'), int64(len(x)), 10), ':')
			dst = append(dst, x...)
		case []byte:
			dst = append(strconv.AppendInt(append(dst, 'b'), int64(len(x)), 10), ':')
			dst = append(dst, x...)
		default:
			v := fmt.Sprintf("%T:%v", x, x)
			dst = append(strconv.AppendInt(append(dst, 'v'), int64(len(v)), 10), ':')
			dst = append(dst, v...)
		}
	}
	return dst, nil
}

// deletes reports whether the input row deletes its key.
func (u *upsertPlan) deletes(in schemas.Row) (bool, error) {
	if u.del == nil {
		return false, nil
	}
	v, err := u.del(in)
	if err != nil {
		return false, fmt.Errorf("upsert: delete: %w", err)
	}
	switch x := v.(type) {
	case bool:
		return x, nil
	case nil:
		return false, nil
	}
	return false, fmt.Errorf("upsert: delete gave %T, not a boolean", v)
}

// change is the newest change of one key: a row written into one of the sink's new files, a
// row of a converted batch (written at the commit), or a delete. It is small (a map entry per
// key changed is what an upsert holds until the commit): the key's values are decoded from
// its map key (keyValues), or kept aside in changes.values when keyOf cannot be decoded.
type change struct {
	at  *rowsAt // where the row is; nil when the key is deleted
	pos int64   // the row's position in at's file, or its index in at's batch
}

// rowsAt is a file the lane wrote rows of changes into, or a converted batch holding them.
type rowsAt struct {
	file  string
	batch *converted
}

// converted is a batch of rows as the lane converted them to the table's Arrow schema when
// they were written (which checks them): the commit writes its rows that are still the
// newest of their keys from it, without converting them again. Only upserts into a
// partitioned table hold them; an unpartitioned table's rows are written as they come. It is
// never released: the commit may be retried with it, and the Go allocator's memory is the
// collector's.
type converted struct {
	rec arrow.RecordBatch
}

// changes are the newest change per key (keyOf) of a lane in an epoch, or of several epochs
// and lanes merged for a commit, with the converted batches their rows are in and the rows
// of the sink's new files that later changes of their keys superseded.
type changes struct {
	keys    map[string]change
	values  map[string]schemas.Row // the values of keys that keyValues cannot decode; nil while none
	batches []*converted           // in the order they were written
	dead    []posDelete            // written rows superseded: the commit deletes them by position
	last    *rowsAt                // the file of the lane's last rows
}

func newChanges() *changes { return &changes{keys: map[string]change{}} }

// set makes ch the newest change of key k; a row of k that was written into a file becomes
// dead.
func (c *changes) set(k string, ch change) {
	if old, ok := c.keys[k]; ok && old.at != nil && old.at.batch == nil {
		c.dead = append(c.dead, posDelete{file: old.at.file, pos: old.pos})
	}
	c.keys[k] = ch
}

// merge lays later over c: the newer change of a key wins.
func (c *changes) merge(later *changes) {
	for k, ch := range later.keys {
		c.set(k, ch)
	}
	if len(later.values) > 0 && c.values == nil {
		c.values = map[string]schemas.Row{}
	}
	maps.Copy(c.values, later.values)
	c.batches = append(c.batches, later.batches...)
	c.dead = append(c.dead, later.dead...)
}

// keyValues decodes a key keyOf encoded from n values that are all int64, string or []byte;
// false for any other.
func keyValues(k string, n int) (schemas.Row, bool) {
	row := make(schemas.Row, 0, n)
	for len(k) > 0 {
		i := strings.IndexByte(k, ':')
		if i < 1 {
			return nil, false
		}
		tag := k[0]
		num, err := strconv.ParseInt(k[1:i], 10, 64)
		if err != nil {
			return nil, false
		}
		k = k[i+1:]
		switch {
		case tag == 'i':
			row = append(row, num)
		case (tag == 's' || tag == 'b') && num >= 0 && num <= int64(len(k)):
			if tag == 's' {
				row = append(row, k[:num])
			} else {
				row = append(row, []byte(k[:num]))
			}
			k = k[num:]
		default:
			return nil, false
		}
	}
	return row, len(row) == n
}

// splitUpserts takes the rows of g for an upsert table. A row whose key is null or whose
// delete expression fails goes to errOut (or stops the pipeline); a row that deletes its key
// moves to dels, since only its key is written; the others stay in g, to be converted (and
// so checked) before they are buffered.
func (w *laneWriter) splitUpserts(g *routed, b *schemas.Batch, errOut *component.ErrorOutput, errs *schemas.Batch) (dels *routed, _ *schemas.Batch, _ error) {
	up := w.s.plan.upsert
	dels = &routed{ts: g.ts}
	keep := 0
	for j, row := range g.rows {
		i := g.idx[j]
		_, err := up.keyOf(w.key[:0], row)
		var del bool
		if err == nil {
			del, err = up.deletes(b.Rows[i])
		}
		switch {
		case err != nil:
			if errs, err = errOut.Add(errs, b, i, fmt.Errorf("%s: table %s: %w", w.s.what, g.ts.name, err)); err != nil {
				return nil, nil, err
			}
		case del:
			dels.rows, dels.idx = append(dels.rows, row), append(dels.idx, i)
		default:
			g.rows[keep], g.idx[keep] = row, i
			keep++
		}
	}
	g.rows, g.idx = g.rows[:keep], g.idx[:keep]
	return dels, errs, nil
}

// buffer records the rows of g (written by the direct path from at on, or converted into rec,
// nil when none) and dels (deleting their key) as the lane's newest changes of their keys, in
// the order of the batch: the last row of a key wins. The changes keep rec until the commit.
func (w *laneWriter) buffer(g, dels *routed, rec arrow.RecordBatch, at posDelete) {
	if w.ups == nil {
		w.ups = map[*tableState]*changes{}
	}
	ch := w.ups[g.ts]
	if ch == nil {
		ch = newChanges()
		w.ups[g.ts] = ch
	}
	var rows *rowsAt
	switch {
	case rec != nil:
		batch := &converted{rec: rec}
		ch.batches = append(ch.batches, batch)
		rows = &rowsAt{batch: batch}
	case at.file != "":
		if ch.last == nil || ch.last.file != at.file {
			ch.last = &rowsAt{file: at.file}
		}
		rows = ch.last
	}
	up := w.s.plan.upsert
	put := func(row schemas.Row, c change) {
		w.key, _ = up.keyOf(w.key[:0], row) // checked by splitUpserts
		k := string(w.key)
		if !up.plain {
			if ch.values == nil {
				ch.values = map[string]schemas.Row{}
			}
			key := make(schemas.Row, len(up.keyIdx))
			for j, i := range up.keyIdx {
				key[j] = row[i]
			}
			ch.values[k] = key
		}
		ch.set(k, c)
	}
	a, d := 0, 0
	for a < len(g.rows) || d < len(dels.rows) {
		if d == len(dels.rows) || (a < len(g.rows) && g.idx[a] < dels.idx[d]) {
			pos := int64(a)
			if rec == nil {
				pos += at.pos
			}
			put(g.rows[a], change{at: rows, pos: pos})
			a++
		} else {
			put(dels.rows[d], change{})
			d++
		}
	}
}
