package ring

// DType is a tensor element type code (PROTOCOL.md, "dtypes").
type DType uint32

const (
	Bool DType = iota + 1
	Uint8
	Int8
	Uint16
	Int16
	Uint32
	Int32
	Uint64
	Int64
	Float16
	BFloat16
	Float32
	Float64
)

var dtypeInfo = [...]struct {
	name string
	size int
}{
	{"invalid", 0}, {"bool", 1}, {"uint8", 1}, {"int8", 1}, {"uint16", 2}, {"int16", 2},
	{"uint32", 4}, {"int32", 4}, {"uint64", 8}, {"int64", 8}, {"float16", 2},
	{"bfloat16", 2}, {"float32", 4}, {"float64", 8},
}

// Size is the item size in bytes, 0 for an unknown code.
func (d DType) Size() int {
	if int(d) < len(dtypeInfo) {
		return dtypeInfo[d].size
	}
	return 0
}

func (d DType) String() string {
	if d != 0 && int(d) < len(dtypeInfo) {
		return dtypeInfo[d].name
	}
	return "unknown"
}
