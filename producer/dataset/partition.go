package dataset

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Hive-style partitioning: a dataset directory laid out as year=2024/country=fr/x.parquet
// (Spark, Hive, pyarrow.dataset.write_dataset with flavor "hive") has the columns year and
// country, constant in each file and stored only in the folder names. The keys are
// those of the folders under the dataset's root (listFiles); folders without "=" are
// not keys. Every file must have the same keys in the same order. Keys and values are
// URI-decoded, and __HIVE_DEFAULT_PARTITION__ is a null, as in pyarrow. A column's type
// is what pyarrow infers by default: int32 when every value that is not null parses as
// one (decimal with an optional "-", or 0x and up to 8 hex digits, the bits of an
// int32), else string.

// hiveNull is the value Hive and Spark write for a null partition value.
const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// partValue is one file's value of one partition column.
type partValue struct {
	text string // URI-decoded
	null bool
	i32  int32 // when the column is int32
}

// hiveKeys returns the key=value folders of path below root, in order.
func hiveKeys(root, path string) (keys []string, vals []partValue, err error) {
	rel, err := filepath.Rel(root, filepath.Dir(path))
	if err != nil || rel == "." {
		return nil, nil, nil
	}
	for _, seg := range strings.Split(rel, string(filepath.Separator)) {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || k == "" {
			continue
		}
		k, v = unescape(k), unescape(v)
		for _, seen := range keys {
			if seen == k {
				return nil, nil, kindf(ErrSchema, "partition key %q appears twice in the folders", k)
			}
		}
		keys = append(keys, k)
		vals = append(vals, partValue{text: v, null: v == hiveNull})
	}
	return keys, vals, nil
}

func unescape(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// setPartitions reads the partition keys of every file from its folders below root,
// checks that they agree and do not name a column of the files, infers each column's
// type and adds the columns to the schema.
func (d *Dataset) setPartitions(root string) error {
	if root == "" {
		return nil
	}
	var first []string
	for i, f := range d.Files {
		keys, vals, err := hiveKeys(root, f.Path)
		if err != nil {
			return &Error{Op: "open", Path: f.Path, RowGroup: -1, Err: err}
		}
		if i == 0 {
			first = keys
		} else if !equalStrings(keys, first) {
			return &Error{Op: "open", Path: f.Path, RowGroup: -1, Err: kindf(ErrSchema,
				"partition folders give the keys (%s), but %s has (%s): every file must sit at the same depth of key=value folders",
				strings.Join(keys, ", "), d.Files[0].Path, strings.Join(first, ", "))}
		}
		f.part = vals
	}
	if len(first) == 0 {
		return nil
	}
	fields := d.Schema.Fields()
	for k, key := range first {
		if d.Schema.HasField(key) {
			return &Error{Op: "open", Path: d.Files[0].Path, RowGroup: -1, Column: key, Err: kindf(ErrSchema,
				"is both a column of the files and a partition key of their folders (%s=...)", key)}
		}
		typ := arrow.DataType(arrow.PrimitiveTypes.Int32)
		nulls := false
		for _, f := range d.Files {
			v := &f.part[k]
			nulls = nulls || v.null
			if v.null {
				continue
			}
			var ok bool
			if v.i32, ok = parseInt32(v.text); !ok {
				typ = arrow.BinaryTypes.String
			}
		}
		if allNull(d.Files, k) {
			typ = arrow.BinaryTypes.String
		}
		fields = append(fields, arrow.Field{Name: key, Type: typ, Nullable: nulls})
		d.Partitions = append(d.Partitions, fields[len(fields)-1])
	}
	md := d.Schema.Metadata()
	d.Schema = arrow.NewSchema(fields, &md)
	return nil
}

func allNull(files []*File, k int) bool {
	for _, f := range files {
		if !f.part[k].null {
			return false
		}
	}
	return true
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// parseInt32 parses s as Arrow's integer parser does for int32 partition values: an
// optional "-" and decimal digits in range, or "0x"/"0X" and 1 to 8 hex digits (the
// bits of an int32, so 0xffffffff is -1).
func parseInt32(s string) (int32, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		h := s[2:]
		if len(h) > 8 {
			return 0, false
		}
		v, err := strconv.ParseUint(h, 16, 32)
		if err != nil || strings.ContainsAny(h, "+-_") {
			return 0, false
		}
		return int32(uint32(v)), true
	}
	digits := strings.TrimPrefix(s, "-")
	if digits == "" {
		return 0, false
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < math.MinInt32 || v > math.MaxInt32 {
		return 0, false
	}
	return int32(v), true
}

// partition returns the index in d.Partitions of the partition column name.
func (d *Dataset) partition(name string) (int, bool) {
	for k, p := range d.Partitions {
		if p.Name == name {
			return k, true
		}
	}
	return 0, false
}

// IsPartition says whether name is a partition column: one of key=value folders, whose
// value is constant in each file.
func (d *Dataset) IsPartition(name string) bool {
	_, ok := d.partition(name)
	return ok
}

// PartitionValues are f's values of the partition columns, in d.Partitions order, as
// the folders spell them ("" and false for a null).
func (d *Dataset) PartitionValues(f *File) (vals []string, valid []bool) {
	for _, v := range f.part {
		vals, valid = append(vals, v.text), append(valid, !v.null)
	}
	return vals, valid
}

// Constant returns partition column name of file f as an array of rows equal values,
// of the column's type (d.Field). ok is false when name is not a partition column. The
// caller releases the array.
func (d *Dataset) Constant(f *File, name string, rows int) (a arrow.Array, ok bool, err error) {
	k, ok := d.partition(name)
	if !ok || k >= len(f.part) {
		return nil, false, nil
	}
	v, typ := f.part[k], d.Partitions[k].Type
	if v.null {
		return array.MakeArrayOfNull(pool, typ, rows), true, nil
	}
	var bufs []*memory.Buffer
	switch typ.ID() {
	case arrow.INT32:
		vals := make([]int32, rows)
		for i := range vals {
			vals[i] = v.i32
		}
		bufs = []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(vals))}
	default:
		if int64(len(v.text))*int64(rows) > math.MaxInt32 {
			return nil, true, fmt.Errorf("partition column %q: %d rows of a %d-byte value do not fit a string array", name, rows, len(v.text))
		}
		offs := make([]int32, rows+1)
		for i := range offs {
			offs[i] = int32(i * len(v.text))
		}
		bufs = []*memory.Buffer{nil, memory.NewBufferBytes(arrow.Int32Traits.CastToBytes(offs)),
			memory.NewBufferBytes(bytes.Repeat([]byte(v.text), rows))}
	}
	data := array.NewData(typ, rows, bufs, nil, 0, 0)
	defer data.Release()
	return array.MakeFromData(data), true, nil
}
