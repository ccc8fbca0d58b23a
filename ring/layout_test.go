package ring

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// goLayout is every field of the shared structures as Go lays them out. The same
// golden file is checked against C's offsetof in bindings/c/tests/test_layout.c.
func goLayout() map[string][2]uintptr {
	var h Header
	var d TensorDesc
	var s SlotHeader
	f := func(off, size uintptr) [2]uintptr { return [2]uintptr{off, size} }
	return map[string][2]uintptr{
		"header magic":            f(unsafe.Offsetof(h.Magic), unsafe.Sizeof(h.Magic)),
		"header version":          f(unsafe.Offsetof(h.Version), unsafe.Sizeof(h.Version)),
		"header header_size":      f(unsafe.Offsetof(h.HeaderSize), unsafe.Sizeof(h.HeaderSize)),
		"header total_size":       f(unsafe.Offsetof(h.TotalSize), unsafe.Sizeof(h.TotalSize)),
		"header slot_size":        f(unsafe.Offsetof(h.SlotSize), unsafe.Sizeof(h.SlotSize)),
		"header slot_count":       f(unsafe.Offsetof(h.SlotCount), unsafe.Sizeof(h.SlotCount)),
		"header schema_count":     f(unsafe.Offsetof(h.SchemaCount), unsafe.Sizeof(h.SchemaCount)),
		"header schema_offset":    f(unsafe.Offsetof(h.SchemaOffset), unsafe.Sizeof(h.SchemaOffset)),
		"header rank":             f(unsafe.Offsetof(h.Rank), unsafe.Sizeof(h.Rank)),
		"header ranks":            f(unsafe.Offsetof(h.Ranks), unsafe.Sizeof(h.Ranks)),
		"header producer_pid":     f(unsafe.Offsetof(h.ProducerPID), unsafe.Sizeof(h.ProducerPID)),
		"header producer_start":   f(unsafe.Offsetof(h.ProducerStart), unsafe.Sizeof(h.ProducerStart)),
		"header batch_capacity":   f(unsafe.Offsetof(h.BatchCapacity), unsafe.Sizeof(h.BatchCapacity)),
		"header slot_header_size": f(unsafe.Offsetof(h.SlotHeaderSize), unsafe.Sizeof(h.SlotHeaderSize)),
		"header config_hash":      f(unsafe.Offsetof(h.ConfigHash), unsafe.Sizeof(h.ConfigHash)),
		"header job":              f(unsafe.Offsetof(h.Job), unsafe.Sizeof(h.Job)),
		"header head":             f(unsafe.Offsetof(h.Head), unsafe.Sizeof(h.Head)),
		"header head_bell":        f(unsafe.Offsetof(h.HeadBell), unsafe.Sizeof(h.HeadBell)),
		"header state":            f(unsafe.Offsetof(h.State), unsafe.Sizeof(h.State)),
		"header seek_ack":         f(unsafe.Offsetof(h.SeekAck), unsafe.Sizeof(h.SeekAck)),
		"header prod_wait_ns":     f(unsafe.Offsetof(h.ProdWaitNs), unsafe.Sizeof(h.ProdWaitNs)),
		"header rows_out":         f(unsafe.Offsetof(h.RowsOut), unsafe.Sizeof(h.RowsOut)),
		"header pub_epoch":        f(unsafe.Offsetof(h.PubEpoch), unsafe.Sizeof(h.PubEpoch)),
		"header pub_step":         f(unsafe.Offsetof(h.PubStep), unsafe.Sizeof(h.PubStep)),
		"header tail":             f(unsafe.Offsetof(h.Tail), unsafe.Sizeof(h.Tail)),
		"header tail_bell":        f(unsafe.Offsetof(h.TailBell), unsafe.Sizeof(h.TailBell)),
		"header consumer_pid":     f(unsafe.Offsetof(h.ConsumerPID), unsafe.Sizeof(h.ConsumerPID)),
		"header cons_wait_ns":     f(unsafe.Offsetof(h.ConsWaitNs), unsafe.Sizeof(h.ConsWaitNs)),
		"header cons_rows":        f(unsafe.Offsetof(h.ConsRows), unsafe.Sizeof(h.ConsRows)),
		"header cons_epoch":       f(unsafe.Offsetof(h.ConsEpoch), unsafe.Sizeof(h.ConsEpoch)),
		"header cons_step":        f(unsafe.Offsetof(h.ConsStep), unsafe.Sizeof(h.ConsStep)),
		"header cons_waiting":     f(unsafe.Offsetof(h.ConsWaiting), unsafe.Sizeof(h.ConsWaiting)),
		"header prod_waiting":     f(unsafe.Offsetof(h.ProdWaiting), unsafe.Sizeof(h.ProdWaiting)),
		"header seek_seq":         f(unsafe.Offsetof(h.SeekSeq), unsafe.Sizeof(h.SeekSeq)),
		"header seek_epoch":       f(unsafe.Offsetof(h.SeekEpoch), unsafe.Sizeof(h.SeekEpoch)),
		"header seek_step":        f(unsafe.Offsetof(h.SeekStep), unsafe.Sizeof(h.SeekStep)),
		"header seek_base":        f(unsafe.Offsetof(h.SeekBase), unsafe.Sizeof(h.SeekBase)),
		"header nodes":            f(unsafe.Offsetof(h.Nodes), unsafe.Sizeof(h.Nodes)),
		"header node_rank":        f(unsafe.Offsetof(h.NodeRank), unsafe.Sizeof(h.NodeRank)),
		"header elastic_limit":    f(unsafe.Offsetof(h.ElasticLimit), unsafe.Sizeof(h.ElasticLimit)),
		"header steps_per_epoch":  f(unsafe.Offsetof(h.StepsPerEpoch), unsafe.Sizeof(h.StepsPerEpoch)),
		"header epochs":           f(unsafe.Offsetof(h.Epochs), unsafe.Sizeof(h.Epochs)),
		"header global_batches":   f(unsafe.Offsetof(h.GlobalBatches), unsafe.Sizeof(h.GlobalBatches)),
		"header cons_done":        f(unsafe.Offsetof(h.ConsDone), unsafe.Sizeof(h.ConsDone)),
		"header stop_kind":        f(unsafe.Offsetof(h.StopKind), unsafe.Sizeof(h.StopKind)),
		"header stall_seq":        f(unsafe.Offsetof(h.StallSeq), unsafe.Sizeof(h.StallSeq)),
		"header plan_version":     f(unsafe.Offsetof(h.PlanVersion), unsafe.Sizeof(h.PlanVersion)),
		"header stall_text":       f(unsafe.Offsetof(h.StallText), unsafe.Sizeof(h.StallText)),
		"header stop_text":        f(unsafe.Offsetof(h.StopText), unsafe.Sizeof(h.StopText)),
		"header SIZE":             f(0, unsafe.Sizeof(h)),
		"tensor name":             f(unsafe.Offsetof(d.Name), unsafe.Sizeof(d.Name)),
		"tensor dtype":            f(unsafe.Offsetof(d.DType), unsafe.Sizeof(d.DType)),
		"tensor ndim":             f(unsafe.Offsetof(d.NDim), unsafe.Sizeof(d.NDim)),
		"tensor shape":            f(unsafe.Offsetof(d.Shape), unsafe.Sizeof(d.Shape)),
		"tensor offset":           f(unsafe.Offsetof(d.Offset), unsafe.Sizeof(d.Offset)),
		"tensor row_bytes":        f(unsafe.Offsetof(d.RowBytes), unsafe.Sizeof(d.RowBytes)),
		"tensor nbytes":           f(unsafe.Offsetof(d.NBytes), unsafe.Sizeof(d.NBytes)),
		"tensor SIZE":             f(0, unsafe.Sizeof(d)),
		"slot seq":                f(unsafe.Offsetof(s.Seq), unsafe.Sizeof(s.Seq)),
		"slot epoch":              f(unsafe.Offsetof(s.Epoch), unsafe.Sizeof(s.Epoch)),
		"slot step":               f(unsafe.Offsetof(s.Step), unsafe.Sizeof(s.Step)),
		"slot rows":               f(unsafe.Offsetof(s.Rows), unsafe.Sizeof(s.Rows)),
		"slot flags":              f(unsafe.Offsetof(s.Flags), unsafe.Sizeof(s.Flags)),
		"slot gen":                f(unsafe.Offsetof(s.Gen), unsafe.Sizeof(s.Gen)),
		"slot base":               f(unsafe.Offsetof(s.Base), unsafe.Sizeof(s.Base)),
		"slot SIZE":               f(0, unsafe.Sizeof(s)),
	}
}

func TestLayoutMatchesGolden(t *testing.T) {
	f, err := os.Open("testdata/layout.golden")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := goLayout()
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || strings.HasPrefix(fs[0], "#") {
			continue
		}
		if len(fs) != 4 {
			t.Fatalf("bad golden line %q", sc.Text())
		}
		key := fs[0] + " " + fs[1]
		off, _ := strconv.Atoi(fs[2])
		size, _ := strconv.Atoi(fs[3])
		got, ok := want[key]
		if !ok {
			t.Errorf("golden %q has no Go field", key)
			continue
		}
		seen[key] = true
		if got != [2]uintptr{uintptr(off), uintptr(size)} {
			t.Errorf("%s: Go has offset %d size %d, golden says %d %d", key, got[0], got[1], off, size)
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("Go field %q missing from the golden file", k)
		}
	}
}
