package carry

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	course "github.com/learn-tinypi/course"
	"github.com/learn-tinypi/course/internal/labsrc"
	"github.com/learn-tinypi/course/internal/practice"
	"github.com/learn-tinypi/course/internal/tree"
)

func solveAll(t *testing.T, b *tree.Builder, num, dir string) {
	ch, _ := b.Course().Chapter(num)
	for _, lab := range ch.Labs {
		files, err := b.LabFiles(ch, lab)
		if err != nil { t.Fatal(err) }
		for _, f := range files {
			ref, err := b.ReferenceBodies(ch, lab, f)
			if err != nil { t.Fatal(err) }
			name := filepath.Join(dir, f)
			src, _ := os.ReadFile(name)
			out, err := labsrc.ReplaceBodies(src, lab.ID, ref)
			if err != nil { t.Fatal(err) }
			os.WriteFile(name, out, 0o644)
		}
	}
}

func TestScratch(t *testing.T) {
	b, err := tree.NewBuilder(course.Content())
	if err != nil { t.Fatal(err) }
	root := "/tmp/scratch"
	os.RemoveAll(root)
	ch07, _ := b.Course().Chapter("07")
	if err := practice.Create(context.Background(), root+"/p07", b, nil, ch07, "zh"); err != nil { t.Fatal(err) }
	solveAll(t, b, "07", root+"/p07")
	prev := root+"/p07"
	for _, n := range []string{"08", "09", "10"} {
		_, prov, err := practice.Find(prev)
		if err != nil { t.Fatal(err) }
		to, _ := b.Course().Chapter(n)
		p, err := New(b, prev, prov, to)
		if err != nil { t.Fatal(err) }
		for _, o := range p.Earlier { fmt.Printf("%s: %+v\n", n, o) }
		fmt.Println("helpers", p.Helpers)
		dir := root+"/p"+n
		if err := practice.CreateFrom(context.Background(), dir, b, nil, to, "zh", &practice.Start{Starter: p.Starter, From: prov.Chapter, Earlier: p.Earlier}); err != nil { t.Fatal(err) }
		if os.Getenv("PROVE") != "" {
			proof, err := p.Prove(context.Background(), ProofOptions{})
			if err != nil { t.Fatal(err) }
			fmt.Printf("proof %+v failure %+v\n", proof.Skipped, proof.Failure)
		}
		solveAll(t, b, n, dir)
		prev = dir
	}
}
