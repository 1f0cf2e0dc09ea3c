package cli

import (
	"slices"

	"github.com/go-git/go-git/v5"

	"github.com/learn-tinypi/course/internal/labsrc"
)

// committed reports whether the code of lab in every file of changes is committed in the git
// repository of the practice directory root: the lab's regions hold the same code in HEAD, so
// replacing them loses nothing that git cannot give back.
func committed(root, lab string, changes []resetFile) bool {
	repo, err := git.PlainOpen(root)
	if err != nil {
		return false
	}
	head, err := repo.Head()
	if err != nil {
		return false
	}
	commit, err := repo.CommitObject(head.Hash())
	if err != nil {
		return false
	}
	for _, rf := range changes {
		f, err := commit.File(rf.path)
		if err != nil {
			return false
		}
		text, err := f.Contents()
		if err != nil {
			return false
		}
		bodies, err := labsrc.Bodies([]byte(text), lab)
		if err != nil || !slices.Equal(bodies, rf.bodies) {
			return false
		}
	}
	return len(changes) > 0
}

// headShort returns the abbreviated hash of HEAD in the git repository of root, "" when there is
// none.
func headShort(root string) string {
	repo, err := git.PlainOpen(root)
	if err != nil {
		return ""
	}
	head, err := repo.Head()
	if err != nil {
		return ""
	}
	return head.Hash().String()[:7]
}
