package dataset

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet"

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

// SchemaElement field ids that checkSchema reads (seName above).
const (
	seType        = 1 // Type: the physical type of a leaf
	seTypeLength  = 2 // type_length of a FIXED_LEN_BYTE_ARRAY
	seRepetition  = 3 // FieldRepetitionType
	seNumChildren = 5 // num_children of a group
)

// maxTypeLength bounds the width of a FIXED_LEN_BYTE_ARRAY column. Writers use a few
// bytes to a few KiB (decimals, UUIDs, float16, fixed-size vectors); arrow-go reserves the
// width for every row it reads, so a width of 1 GiB from a damaged footer took the
// process down on a file of 20 rows.
const maxTypeLength = 1 << 20

// schemaElem is what checkSchema reads of a SchemaElement; has* say which fields are set.
type schemaElem struct {
	name                             string
	typ, typeLen, rep, children      int32
	hasType, hasTypeLen, hasChildren bool
	hasRep                           bool
}

// checkSchema validates the schema of a raw footer before arrow-go builds its tree from
// it, so that a malformed one is refused with what is wrong instead of what arrow-go does
// with it: it sizes a group's children by num_children before it counts them (a negative
// count panics with "makeslice: cap out of range", 2^31-1 exhausts memory and ends the
// process) and takes any number for a leaf's physical type or repetition. Checked: every
// group's children are there, every leaf has one of the eight physical types, a
// FIXED_LEN_BYTE_ARRAY has a width from 1 to maxTypeLength, a repetition type is one of
// the three. A footer this reader cannot parse is left to arrow-go to report.
func checkSchema(raw []byte) error {
	r := thrift.NewReader(raw)
	for last := int16(0); ; {
		id, typ, err := r.FieldHeader(last)
		if err != nil || typ == thrift.Stop {
			return nil
		}
		if id == fmdSchema && typ == thrift.List {
			elems, err := readSchema(r)
			if err != nil {
				return nil
			}
			return validateSchema(elems)
		}
		if r.Skip(typ) != nil {
			return nil
		}
		last = id
	}
}

// readSchema reads the list of SchemaElements, the list header next.
func readSchema(r *thrift.Reader) ([]schemaElem, error) {
	n, elem, err := r.ListHeader()
	if err != nil || elem != thrift.Struct {
		return nil, errThrift
	}
	elems := make([]schemaElem, n)
	for i := range elems {
		e := &elems[i]
		for last := int16(0); ; {
			id, typ, err := r.FieldHeader(last)
			if err != nil {
				return nil, err
			}
			if typ == thrift.Stop {
				break
			}
			last = id
			switch {
			case id == seName && typ == thrift.Binary:
				b, err := r.Binary()
				if err != nil {
					return nil, err
				}
				e.name = string(b)
				continue
			case typ == thrift.I32 && (id == seType || id == seTypeLength || id == seRepetition || id == seNumChildren):
				v, err := r.I32()
				if err != nil {
					return nil, err
				}
				switch id {
				case seType:
					e.typ, e.hasType = v, true
				case seTypeLength:
					e.typeLen, e.hasTypeLen = v, true
				case seRepetition:
					e.rep, e.hasRep = v, true
				case seNumChildren:
					e.children, e.hasChildren = v, true
				}
				continue
			}
			if err := r.Skip(typ); err != nil {
				return nil, err
			}
		}
	}
	return elems, nil
}

// validateSchema walks the elements depth first, as arrow-go does: the root, then each
// group's children after it.
func validateSchema(elems []schemaElem) error {
	need := 1 // elements the tree still calls for
	for i, e := range elems {
		if need == 0 {
			break // elements past the tree: arrow-go leaves them, and so does this
		}
		need--
		what := fmt.Sprintf("schema element %d (%q)", i, e.name)
		switch {
		case e.hasChildren && e.children < 0:
			return kindf(ErrCorrupt, "%s claims %d children", what, e.children)
		case e.hasChildren && e.children > 0:
			if int64(need)+int64(e.children) > int64(len(elems)-1-i) {
				return kindf(ErrCorrupt, "%s claims %d children, the footer has %d elements", what, e.children, len(elems))
			}
			need += int(e.children)
		case i > 0 && !e.hasType:
			return kindf(ErrCorrupt, "%s has neither children nor a physical type", what)
		case i > 0 && (e.typ < 0 || e.typ > int32(parquet.Types.FixedLenByteArray)):
			return kindf(ErrCorrupt, "%s has physical type %d, which Parquet does not have", what, e.typ)
		case i > 0 && e.typ == int32(parquet.Types.FixedLenByteArray) && (!e.hasTypeLen || e.typeLen <= 0 || e.typeLen > maxTypeLength):
			if !e.hasTypeLen {
				return kindf(ErrCorrupt, "%s is a FIXED_LEN_BYTE_ARRAY without a width", what)
			}
			return kindf(ErrCorrupt, "%s is a FIXED_LEN_BYTE_ARRAY of %d bytes a value (this reader takes 1 to %d)", what, e.typeLen, maxTypeLength)
		}
		if i > 0 && e.hasRep && (e.rep < 0 || e.rep > int32(parquet.Repetitions.Repeated)) {
			return kindf(ErrCorrupt, "%s has repetition type %d (0 required, 1 optional, 2 repeated)", what, e.rep)
		}
	}
	return nil
}
