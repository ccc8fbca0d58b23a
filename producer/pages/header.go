package pages

import (
	"errors"
	"strconv"

	"github.com/shmloader/shmloader/producer/internal/thrift"
)

// errHeader is every failure to read a page header's Thrift.
var errHeader = corrupt("malformed page header")

// PageType is a page header's type field.
type PageType int32

// Page types (parquet.thrift PageType).
const (
	DataPage       PageType = 0
	IndexPage      PageType = 1
	DictionaryPage PageType = 2
	DataPageV2     PageType = 3
)

// Encoding is a parquet.thrift Encoding.
type Encoding int32

// Encodings.
const (
	Plain                Encoding = 0
	PlainDictionary      Encoding = 2
	RLE                  Encoding = 3
	BitPacked            Encoding = 4
	DeltaBinaryPacked    Encoding = 5
	DeltaLengthByteArray Encoding = 6
	DeltaByteArray       Encoding = 7
	RLEDictionary        Encoding = 8
	ByteStreamSplit      Encoding = 9
)

func (e Encoding) String() string {
	names := map[Encoding]string{Plain: "PLAIN", PlainDictionary: "PLAIN_DICTIONARY", RLE: "RLE",
		BitPacked: "BIT_PACKED", DeltaBinaryPacked: "DELTA_BINARY_PACKED",
		DeltaLengthByteArray: "DELTA_LENGTH_BYTE_ARRAY", DeltaByteArray: "DELTA_BYTE_ARRAY",
		RLEDictionary: "RLE_DICTIONARY", ByteStreamSplit: "BYTE_STREAM_SPLIT"}
	if s, ok := names[e]; ok {
		return s
	}
	return "encoding " + strconv.Itoa(int(e))
}

// Header is a page header: the fields of parquet.thrift's PageHeader and of the one
// nested header its type calls for. Statistics and unknown fields are skipped.
type Header struct {
	Size         int // bytes of the header itself
	Type         PageType
	Uncompressed int // page body bytes once decompressed
	Compressed   int // page body bytes that follow the header
	CRC          int32
	HasCRC       bool

	NumValues    int      // levels of a data page; entries of a dictionary page
	Encoding     Encoding // of the values (or of the dictionary's entries)
	DefEncoding  Encoding // data page v1
	RepEncoding  Encoding // data page v1
	NumNulls     int      // data page v2; 0 or -1 from writers that keep no statistics
	NumRows      int      // data page v2
	DefLen       int      // data page v2: bytes of definition levels, never compressed
	RepLen       int      // data page v2: bytes of repetition levels, never compressed
	V2Compressed bool     // data page v2: whether the values section is compressed

	// RestAt is the offset of the first field after fields 1-3 and RestID its field id;
	// tests use them to insert a CRC into a header written without one.
	RestAt, RestID int
}

// ParseHeader decodes the page header at the start of b. Only its own bytes are read;
// the body's size is checked by the caller against what follows.
func ParseHeader(b []byte) (Header, error) {
	h, err := parseHeader(thrift.NewReader(b))
	if errors.Is(err, thrift.ErrMalformed) {
		err = errHeader
	}
	return h, err
}

func parseHeader(r *thrift.Reader) (Header, error) {
	h := Header{V2Compressed: true}
	seen, nested := 0, 0
	for last := int16(0); ; {
		at := r.Pos()
		id, typ, err := r.FieldHeader(last)
		if err != nil {
			return h, err
		}
		if typ == thrift.Stop {
			break
		}
		if id > 3 && h.RestID == 0 {
			h.RestAt, h.RestID = at, int(id)
		}
		switch {
		case id >= 1 && id <= 4:
			if typ != thrift.I32 {
				return h, errHeader
			}
			v, err := r.I32()
			if err != nil {
				return h, err
			}
			seen |= 1 << id
			switch id {
			case 1:
				h.Type = PageType(v)
			case 2:
				h.Uncompressed = int(v)
			case 3:
				h.Compressed = int(v)
			case 4:
				h.CRC, h.HasCRC = v, true
			}
		case (id == 5 || id == 7 || id == 8) && typ == thrift.Struct:
			nested |= 1 << id
			if err := readNested(r, id, &h); err != nil {
				return h, err
			}
		default:
			if err := r.Skip(typ); err != nil {
				return h, err
			}
		}
		last = id
	}
	if seen&(1<<1|1<<2|1<<3) != 1<<1|1<<2|1<<3 || h.Compressed < 0 || h.Uncompressed < 0 {
		return h, errHeader
	}
	want := map[PageType]int{DataPage: 1 << 5, DictionaryPage: 1 << 7, DataPageV2: 1 << 8}[h.Type]
	if want != 0 && nested&want == 0 {
		return h, corrupt("%s page header without its %s header", h.Type, h.Type)
	}
	if h.NumValues < 0 || h.NumRows < 0 || h.DefLen < 0 || h.RepLen < 0 {
		return h, corrupt("page header with a negative count")
	}
	if h.RestID == 0 {
		h.RestAt = r.Pos() - 1 // the stop byte
	}
	h.Size = r.Pos()
	return h, nil
}

func (t PageType) String() string {
	switch t {
	case DataPage:
		return "data"
	case IndexPage:
		return "index"
	case DictionaryPage:
		return "dictionary"
	case DataPageV2:
		return "data v2"
	}
	return "type " + strconv.Itoa(int(t)) + " page"
}

// readNested reads DataPageHeader (5), DictionaryPageHeader (7) or DataPageHeaderV2 (8).
func readNested(r *thrift.Reader, which int16, h *Header) error {
	for last := int16(0); ; {
		id, typ, err := r.FieldHeader(last)
		if err != nil || typ == thrift.Stop {
			return err
		}
		last = id
		if typ == thrift.True || typ == thrift.False {
			if which == 8 && id == 7 {
				h.V2Compressed = typ == thrift.True
			}
			continue
		}
		if typ != thrift.I32 || id > 7 {
			if err := r.Skip(typ); err != nil {
				return err
			}
			continue
		}
		v, err := r.I32()
		if err != nil {
			return err
		}
		switch which<<4 | id {
		case 5<<4 | 1, 7<<4 | 1, 8<<4 | 1:
			h.NumValues = int(v)
		case 5<<4 | 2, 7<<4 | 2, 8<<4 | 4:
			h.Encoding = Encoding(v)
		case 5<<4 | 3:
			h.DefEncoding = Encoding(v)
		case 5<<4 | 4:
			h.RepEncoding = Encoding(v)
		case 8<<4 | 2:
			h.NumNulls = int(v)
		case 8<<4 | 3:
			h.NumRows = int(v)
		case 8<<4 | 5:
			h.DefLen = int(v)
		case 8<<4 | 6:
			h.RepLen = int(v)
		}
	}
}
