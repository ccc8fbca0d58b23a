package dataset

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// Stats returns what the footer says about a primitive column (top-level, or a field of
// a struct by its dotted path) in one row group: the row count always, the null count
// and min/max when the writer recorded them (and arrow-go trusts that writer's
// statistics). Columns of other types get KindNone. A partition column's statistics
// are exact, its file's value: min and max equal, no nulls or only nulls.
func (d *Dataset) Stats(rg RowGroup, column string) (st Stats, err error) {
	fail := func(err error) (Stats, error) {
		return Stats{}, &Error{Op: "stats", Path: rg.File.Path, RowGroup: rg.Index, Column: column, Err: err}
	}
	if rg.File == nil {
		return Stats{}, &Error{Op: "stats", RowGroup: rg.Index, Column: column, Err: ErrRowGroup}
	}
	meta, err := rg.File.Footer()
	if err != nil {
		return Stats{}, err
	}
	if rg.Index < 0 || rg.Index >= len(meta.RowGroups) {
		return Stats{}, &Error{Op: "stats", Path: rg.File.Path, RowGroup: rg.Index, Column: column, Err: ErrRowGroup}
	}
	field, ok := d.Field(column)
	if !ok {
		return fail(ErrNoColumn)
	}
	st = Stats{Rows: meta.RowGroups[rg.Index].NumRows}
	kind := statKind(field.Type)
	if k, ok := d.partition(column); ok {
		return partitionStats(st, rg.File.part[k], kind), nil
	}
	// Only a primitive column is one leaf whose path is its (dotted) name.
	leaf := meta.Schema.ColumnIndexByName(column)
	if leaf < 0 {
		return st, nil
	}
	ts, err := typedStats(meta, rg.Index, leaf)
	if err != nil {
		return fail(err)
	}
	if ts == nil {
		return st, nil
	}
	if ts.HasNullCount() {
		st.HasNullCount, st.NullCount = true, ts.NullCount()
	}
	if !ts.HasMinMax() || kind == KindNone {
		return st, nil
	}
	st.Kind, st.HasMinMax = kind, true
	switch s := ts.(type) {
	case *metadata.Int32Statistics:
		st.MinI, st.MaxI = int64(s.Min()), int64(s.Max())
		if field.Type.ID() == arrow.UINT32 { // stored as INT32, ordered unsigned
			st.MinI, st.MaxI = int64(uint32(s.Min())), int64(uint32(s.Max()))
		}
		st.MinF, st.MaxF = float64(st.MinI), float64(st.MaxI)
	case *metadata.Int64Statistics:
		st.MinI, st.MaxI = s.Min(), s.Max()
		st.MinF, st.MaxF = float64(st.MinI), float64(st.MaxI)
	case *metadata.Float32Statistics:
		st.MinF, st.MaxF = float64(s.Min()), float64(s.Max())
	case *metadata.Float64Statistics:
		st.MinF, st.MaxF = s.Min(), s.Max()
	case *metadata.ByteArrayStatistics:
		st.MinS, st.MaxS = string(s.Min()), string(s.Max())
	default:
		st.Kind, st.HasMinMax = KindNone, false
	}
	return st, nil
}

func typedStats(meta *metadata.FileMetaData, rg, leaf int) (ts metadata.TypedStatistics, err error) {
	defer recovered(&err)
	cc, err := meta.RowGroup(rg).ColumnChunk(leaf)
	if err != nil {
		return nil, kindf(ErrCorrupt, "column chunk metadata: %v", err)
	}
	ts, err = cc.Statistics()
	if err != nil {
		return nil, kindf(ErrCorrupt, "statistics: %v", err)
	}
	return ts, nil
}

// statKind maps an Arrow type to the kind of its min/max. Unsigned 64-bit integers do
// not fit int64 and are left out, as are dates, times and decimals, whose footer values
// are not the numbers a filter would compare.
func statKind(t arrow.DataType) StatKind {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32:
		return KindInt
	case arrow.FLOAT32, arrow.FLOAT64:
		return KindFloat
	case arrow.STRING, arrow.BINARY, arrow.LARGE_STRING, arrow.LARGE_BINARY:
		return KindString
	}
	return KindNone
}

// partitionStats are the statistics of a row group of st.Rows rows whose column holds
// the file's partition value v everywhere.
func partitionStats(st Stats, v partValue, kind StatKind) Stats {
	st.HasNullCount = true
	if v.null {
		st.NullCount = st.Rows
		return st
	}
	st.HasMinMax, st.Kind = true, kind
	switch kind {
	case KindInt:
		st.MinI, st.MaxI = int64(v.i32), int64(v.i32)
		st.MinF, st.MaxF = float64(v.i32), float64(v.i32)
	case KindString:
		st.MinS, st.MaxS = v.text, v.text
	default:
		st.HasMinMax, st.Kind = false, KindNone
	}
	return st
}
