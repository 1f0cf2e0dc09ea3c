// Package linediff aligns two lists of lines on a longest common subsequence: the line diff that
// `course solution` prints as a unified diff and that diagnose reports between two runs.
//
// The table it builds is len(a)×len(b), which is plenty for a lab region or a run's output of a
// few hundred lines.
package linediff

// Kind says what a diff does with one line. Its value is the line's prefix in a unified diff.
type Kind byte

// The kinds of line in a diff.
const (
	Keep   Kind = ' ' // in both a and b
	Delete Kind = '-' // only in a
	Insert Kind = '+' // only in b
)

// Op is one line of a diff with its 0-based position in a and in b; for a line only one side
// has, the position on the other side is where it would stand.
type Op struct {
	Kind     Kind
	Text     string
	Old, New int
}

// Diff aligns a and b on a longest common subsequence of lines and returns every line of both,
// in order. Within a changed stretch a's lines (Delete) come before b's (Insert).
func Diff(a, b []string) []Op {
	// lcs[i][j] is the length of the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []Op
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			ops = append(ops, Op{Keep, a[i], i, j})
			i++
			j++
		case j == len(b) || (i < len(a) && lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, Op{Delete, a[i], i, j})
			i++
		default:
			ops = append(ops, Op{Insert, b[j], i, j})
			j++
		}
	}
	return ops
}

// Changed reports whether ops change anything: whether one of them is not Keep.
func Changed(ops []Op) bool {
	for _, op := range ops {
		if op.Kind != Keep {
			return true
		}
	}
	return false
}
