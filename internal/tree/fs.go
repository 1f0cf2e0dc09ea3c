package tree

import "io/fs"

// FS returns the course content the builder reads, for callers that need more of it than trees
// (lab cards, chapter texts, practice templates).
func (b *Builder) FS() fs.FS { return b.fsys }
