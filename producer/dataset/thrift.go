package dataset

import (
	"errors"
	"fmt"

	"github.com/shmloader/shmloader/producer/internal/thrift"
)

// Footers are read as a tree of thrift.Values, so that one can be checked or changed
// field by field and written back (sanitizeFooter).

var errThrift = errors.New("malformed footer")

// readFooter reads a raw footer as a tree.
func readFooter(raw []byte) (thrift.Value, error) {
	root, err := thrift.NewReader(raw).Struct()
	if err != nil {
		return thrift.Value{}, errThrift
	}
	return root, nil
}

// Thrift field ids of the footer structs that sanitizeFooter reads.
const (
	fmdSchema       = 2  // FileMetaData.schema: list<SchemaElement>
	seName          = 4  // SchemaElement.name
	seConvertedType = 6  // SchemaElement.converted_type
	seLogicalType   = 10 // SchemaElement.logicalType: union LogicalType
	maxConverted    = 21 // INTERVAL, the last ConvertedType
)

// knownLogical are the LogicalType union members arrow-go reads (9 is unused).
func knownLogical(id int16) bool { return id >= 1 && id <= 18 && id != 9 }

// sanitizeFooter drops, from the schema of a raw footer, the logical types that
// arrow-go does not know (a newer writer's: arrow-go panics on them) together with the
// element's converted type, and converted types past the known ones. Such columns are
// then read by their physical type, as pyarrow reads them. It returns the new footer
// and a note per column changed; no notes when nothing was.
func sanitizeFooter(raw []byte) ([]byte, []string, error) {
	root, err := readFooter(raw)
	if err != nil {
		return nil, nil, err
	}
	schema := root.Field(fmdSchema)
	if schema == nil || schema.Type != thrift.List {
		return nil, nil, errThrift
	}
	var notes []string
	for i := range schema.Value.Items {
		el := &schema.Value.Items[i]
		name := "?"
		if n := el.Field(seName); n != nil {
			if s, ok := n.Text(); ok {
				name = s
			}
		}
		if lt := el.Field(seLogicalType); lt != nil {
			id := int16(-1)
			if lt.Type == thrift.Struct && len(lt.Value.Fields) == 1 {
				id = lt.Value.Fields[0].ID
			}
			if lt.Type != thrift.Struct || !knownLogical(id) {
				el.Drop(seLogicalType, seConvertedType)
				notes = append(notes, noteUnknown(name, "logical type", int(id)))
				continue
			}
		}
		if ct := el.Field(seConvertedType); ct != nil {
			if v, ok := ct.I32(); !ok || v < 0 || v > maxConverted {
				el.Drop(seConvertedType)
				notes = append(notes, noteUnknown(name, "converted type", int(v)))
			}
		}
	}
	if len(notes) == 0 {
		return raw, nil, nil
	}
	return thrift.Append(nil, thrift.Struct, root), notes, nil
}

func noteUnknown(col, what string, id int) string {
	return fmt.Sprintf("column %q: %s %d is unknown to this reader; read as its physical type", col, what, id)
}
