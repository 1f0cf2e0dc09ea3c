package cli

import (
	"bytes"

	"github.com/go-git/go-git/v5"
)

// committed reports whether every file of changes is committed in the git repository of the
// practice directory root as it is now: its content equals the one in HEAD, so replacing it loses
// nothing that git cannot give back.
func committed(root string, changes []resetFile) bool {
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
		if err != nil || !bytes.Equal([]byte(text), rf.src) {
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
