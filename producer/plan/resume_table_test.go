package plan

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// The resume rule has two implementations: Plan.Resume here, which `shmloader serve
// --resume` applies, and shml_resume in the C library, which every trainer asks
// (bindings/c/src/resume.c). TestResumeTable holds testdata/resume.golden to Plan.Resume's
// answers on random plans and positions, and bindings/c/tests/test_resume.c holds the C
// library to the same file, so the two agree on every case in it.

var updateResume = flag.Bool("update-resume", false, "rewrite testdata/resume.golden from Plan.Resume")

const resumeGolden = "testdata/resume.golden"

const resumeHeader = `# Plan.Resume on random plans (TestResumeTable writes it: go test ./producer/plan -run
# TestResumeTable -update-resume); bindings/c/tests/test_resume.c checks shml_resume against it.
# A position saved at step saved_step of an epoch started at global batch saved_base by
# saved_world trainers, resumed by a rank of a job of ranks x nodes with the header's
# elastic_limit, steps_per_epoch (the rank's) and global_batches, continues at step step of
# an epoch started at base, or is refused.
# saved_world saved_base saved_step ranks nodes elastic_limit steps_per_epoch global_batches -> base step | refused
`

// resumeTable is the golden file's text: n cases, the same on every run.
func resumeTable(n int) string {
	rng := rand.New(rand.NewPCG(20261125, 6))
	var b strings.Builder
	b.WriteString(resumeHeader)
	for written := 0; written < n; {
		groups := 1 + rng.IntN(40)
		rows := make([]int64, groups)
		for i := range rows {
			if rng.IntN(8) != 0 { // some row groups hold no kept rows
				rows[i] = 1 + rng.Int64N(60)
			}
		}
		in := Input{Rows: rows, BatchSize: 1 + rng.IntN(12), Seed: rng.Uint64(), ShuffleRowGroups: rng.IntN(2) == 0,
			Window: rng.IntN(3), DropLast: rng.IntN(2) == 0, Partitions: []int{0, 1, 2, 4, 8}[rng.IntN(5)]}
		from, to := layouts[rng.IntN(len(layouts))], layouts[rng.IntN(len(layouts))]
		if rng.IntN(4) == 0 {
			to = from // the same world: the position is kept
		}
		at := func(l layout) (*Plan, error) {
			in := in
			in.Ranks, in.Nodes, in.Node = l.ranks, l.nodes, rng.IntN(l.nodes)
			return New(in)
		}
		pa, err := at(from)
		if err != nil {
			continue
		}
		pb, err := at(to)
		if err != nil {
			continue
		}
		// The epoch the state was saved in started at 0, or where an earlier resume under
		// yet another world size started it.
		var savedBase uint64
		if g := rng.Uint64N(pa.ElasticLimit() + 1); rng.IntN(3) == 0 && g%pa.World() != 0 {
			savedBase = g
		}
		// Any step some rank of the saving job reached (rank 0 has the most), its end included.
		step := rng.Uint64N(pa.StepsFrom(0, savedBase) + 1)
		rank := rng.IntN(to.ranks)
		fmt.Fprintf(&b, "%d %d %d %d %d %d %d %d -> ", pa.World(), savedBase, step, to.ranks, to.nodes,
			pb.ElasticLimit(), pb.Steps(rank), pb.GlobalBatches())
		if base, s, err := pb.Resume(pa.World(), savedBase, step); err != nil {
			b.WriteString("refused\n")
		} else {
			fmt.Fprintf(&b, "%d %d\n", base, s)
		}
		written++
	}
	return b.String()
}

func TestResumeTable(t *testing.T) {
	got := resumeTable(1500)
	if *updateResume {
		if err := os.WriteFile(resumeGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(resumeGolden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Fatalf("%s does not hold Plan.Resume's answers: if the rule changed on purpose, change shml_resume "+
			"(bindings/c/src/resume.c) the same way and run go test ./producer/plan -run TestResumeTable -update-resume",
			resumeGolden)
	}
	// The table is worth checking against: translations, refusals and kept positions.
	var moved, refused, kept int
	for _, line := range strings.Split(got, "\n") {
		var wa, ba, sa, ranks, nodes, limit, spe, gb uint64
		var rest string
		if n, _ := fmt.Sscanf(line, "%d %d %d %d %d %d %d %d -> %s", &wa, &ba, &sa, &ranks, &nodes, &limit, &spe, &gb, &rest); n != 9 {
			continue
		}
		switch {
		case rest == "refused":
			refused++
		case wa == ranks*nodes:
			kept++
		default:
			moved++
		}
	}
	if moved < 500 || refused < 20 || kept < 100 {
		t.Fatalf("the table has %d translated positions, %d refused and %d kept: too few of some kind", moved, refused, kept)
	}
}
