package gen

import (
	"fmt"
	"hash/fnv"
	"math"

	"github.com/apache/arrow-go/v18/arrow"
)

type kind int

const (
	kindID kind = iota
	kindFeature
	kindCategorical
	kindString
	kindSeq
	kindLabel
)

// column is one generated column and the constants its values derive from.
type column struct {
	name     string
	kind     kind
	nullable bool
	key      uint64  // values: mix(key + id)
	nullKey  uint64  // null decisions, independent of the values
	mean     float64 // kindFeature
	scale    float64 // kindFeature
	card     uint64  // kindCategorical, kindString: number of distinct values
}

// columns lists the dataset's columns in file order: id, f000.., c00.., s00.., seq, label.
func columns(c Config) []column {
	var cols []column
	add := func(name string, k kind, nullable bool) *column {
		key := mix(c.Seed ^ nameHash(name))
		cols = append(cols, column{name: name, kind: k, nullable: nullable, key: key, nullKey: mix(key ^ 0x6a09e667f3bcc909)})
		return &cols[len(cols)-1]
	}
	add("id", kindID, false)
	for i := 0; i < c.Features; i++ {
		// Every 4th feature has nulls, so fill_null has work to do.
		col := add(fmt.Sprintf("f%03d", i), kindFeature, i%4 == 0)
		// Means in [-10, 10), scales in [0.5, 10.5): normalize changes the numbers.
		col.mean = 20*unit(mix(col.key^1)) - 10
		col.scale = 0.5 + 10*unit(mix(col.key^2))
	}
	for i := 0; i < c.Categoricals; i++ {
		col := add(fmt.Sprintf("c%02d", i), kindCategorical, i%3 == 2)
		// Cardinalities spread log-uniformly from 10 to 100000 across the columns.
		col.card = 10
		if c.Categoricals > 1 {
			col.card = uint64(math.Round(10 * math.Pow(10, 4*float64(i)/float64(c.Categoricals-1))))
		}
	}
	for i := 0; i < c.Strings; i++ {
		col := add(fmt.Sprintf("s%02d", i), kindString, true)
		col.card = []uint64{100, 1000, 10000, 100000}[i%4]
	}
	add("seq", kindSeq, true)
	add("label", kindLabel, false)
	return cols
}

// Schema is the Arrow schema of a dataset made with c.
func Schema(c Config) *arrow.Schema {
	cols := columns(c)
	fields := make([]arrow.Field, len(cols))
	for i, col := range cols {
		fields[i] = arrow.Field{Name: col.name, Type: col.kind.arrowType(), Nullable: col.nullable}
	}
	return arrow.NewSchema(fields, nil)
}

func (k kind) arrowType() arrow.DataType {
	switch k {
	case kindID, kindCategorical:
		return arrow.PrimitiveTypes.Int64
	case kindFeature, kindLabel:
		return arrow.PrimitiveTypes.Float32
	case kindString:
		return arrow.BinaryTypes.String
	}
	return arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int64)
}

func nameHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}
