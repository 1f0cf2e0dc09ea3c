package devcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/learn-tinypi/course/internal/manifest"
	"github.com/learn-tinypi/course/internal/textpair"
	"github.com/learn-tinypi/course/internal/tree"
)

// textsTask is the check that ch's text exists in English too and agrees in structure with the
// Chinese one (internal/textpair): the same headings level by level, the same code blocks byte
// for byte, the same labs in the same sections, the same links, every relative link resolving.
// A change made to one text and not the other fails here, with the section named.
func textsTask(b *tree.Builder, ch *manifest.Chapter) task {
	return task{
		name: fmt.Sprintf("texts: %s and %s agree in structure (headings, code blocks, labs, links)", ch.DocPath("zh"), ch.DocPath("en")),
		run: func(context.Context, string) (Check, error) {
			return checkTexts(b.FS(), ch), nil
		},
	}
}

// checkTexts proves textsTask's rule for ch in the course content fsys.
func checkTexts(fsys fs.FS, ch *manifest.Chapter) Check {
	if ch.Doc == "" {
		return fail("the manifest names no doc for the chapter")
	}
	zhPath, enPath := ch.DocPath("zh"), ch.DocPath("en")
	zh, err := fs.ReadFile(fsys, zhPath)
	if err != nil {
		return fail("%s: %v", zhPath, err)
	}
	en, err := fs.ReadFile(fsys, enPath)
	if errors.Is(err, fs.ErrNotExist) {
		return fail("%s is missing: every chapter text exists in Chinese and in English, kept in step (docs/authoring.md, \"Chapter texts\")", enPath)
	}
	if err != nil {
		return fail("%s: %v", enPath, err)
	}
	resolves := func(name, dest string) bool {
		target := path.Clean(path.Join(path.Dir(name), dest))
		_, err := fs.Stat(fsys, target)
		return err == nil
	}
	if problems := textpair.Compare(zhPath, zh, enPath, en, resolves); len(problems) > 0 {
		return Check{Detail: strings.Join(problems, "\n")}
	}
	return pass()
}
