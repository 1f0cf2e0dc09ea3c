package serve

import (
	"fmt"
	"hash/maphash"

	"github.com/learn-tinypi/course/internal/sessionlog"
	"github.com/learn-tinypi/course/internal/transcript"
	"github.com/learn-tinypi/course/solutions/tinypi"
)

// A log set beside a reference is aligned as course transcript aligns two runs: the events
// section (one line per event, its type and summary) and then the transcript section (one line
// per derived message), lines matched by position. Rendering every line of two long logs would
// cost their whole size, so each read of a log keeps a fingerprint (a 64-bit hash) of each of
// its lines; the first difference is found by comparing fingerprints, and only the rows around
// it are rendered from the events read again.

// compareAllUpTo: two logs with at most this many rows together are compared row by row in
// full; beyond it the page shows compareBefore rows before the first difference and
// compareAfter from it.
const (
	compareAllUpTo = 400
	compareBefore  = 10
	compareAfter   = 30
)

// fingerprints are the hashes of a log's comparison lines: one per event, one per derived
// message.
type fingerprints struct {
	seed   maphash.Seed
	events []uint64
	// msgs has one hash per event with a message, in log order; summary is that of the summary
	// message of the latest compaction read (hasSummary says there is one).
	msgs       []uint64
	summary    uint64
	hasSummary bool
	// derived has one hash per message DeriveMessages gives for the whole log (set by finish).
	derived []uint64
}

// add takes the next event of a log as it is read.
func (f *fingerprints) add(e sessionlog.Event, lang string) {
	f.events = append(f.events, maphash.String(f.seed, eventLine(e, lang)))
	switch {
	case e.Message != nil:
		f.msgs = append(f.msgs, maphash.String(f.seed, transcript.DescribeMessage(e.Message)))
	case e.Compaction != nil:
		f.summary, f.hasSummary = maphash.String(f.seed, transcript.DescribeMessage(sessionlog.SummaryMessage(e))), true
	}
}

// finish sets derived once log, whose events add took, is read: the messages of every event
// with one, or after a compaction its summary and the messages from its cut on.
func (f *fingerprints) finish(log *sessionlog.Log) {
	h := log.HistoryThrough(log.Len() - 1)
	if h.Compaction < 0 || !f.hasSummary {
		f.derived = f.msgs
		return
	}
	f.derived = append([]uint64{f.summary}, f.msgs[h.From:h.To]...)
}

// derivedMessage is the message e contributes to a derived history: its own, or a compaction's
// summary.
func derivedMessage(e sessionlog.Event) tinypi.Message {
	if e.Compaction != nil {
		return sessionlog.SummaryMessage(e)
	}
	return e.Message
}

// eventLine is an event's line in the comparison. Times are left out: they differ between any
// two runs.
func eventLine(e sessionlog.Event, lang string) string {
	return fmt.Sprintf("%-17s %s", e.Type, summary(e, lang))
}

// Compare is a log set beside a reference log, aligned as course transcript aligns runs.
type Compare struct {
	ReferencePath string       `json:"referencePath"`
	Rows          []CompareRow `json:"rows"`
	// Total is the number of rows of the whole comparison; Rows are some of them (all of them
	// for short logs).
	Total int `json:"total"`
	// First is the index in Rows of the first difference; -1 when the logs agree or when the
	// first difference is not among Rows.
	First int `json:"first"`
	// Summary says where the first difference is, or that the logs agree.
	Summary string `json:"summary"`
}

// CompareRow is one aligned line; an absent side is "·".
type CompareRow struct {
	// N is the row's number in the whole comparison, from 1.
	N         int    `json:"n"`
	Section   string `json:"section"`
	Learner   string `json:"learner"`
	Reference string `json:"reference"`
	Differs   bool   `json:"differs"`
	// HiddenBefore is the number of rows left out before this one.
	HiddenBefore int `json:"hiddenBefore,omitempty"`
}

// firstDifference returns the first index where a and b differ, or where the shorter ends; -1
// when they are equal.
func firstDifference(a, b []uint64) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// compare aligns b's log (fingerprints lp) with ref (rp) and marks the first difference in v.
// A compaction is aligned as any event is (eventLine), and the transcript section holds the
// derived messages of each whole log, a compaction's summary first.
func (b *builder) compare(v *View, lp *fingerprints, ref *sessionlog.Log, rp *fingerprints, refPath string) error {
	labels := transcript.LabelsIn(b.lang)
	eventRows := max(len(lp.events), len(rp.events))
	total := eventRows + max(len(lp.derived), len(rp.derived))
	first := firstDifference(lp.events, rp.events)
	if first < 0 {
		if m := firstDifference(lp.derived, rp.derived); m >= 0 {
			first = eventRows + m
		}
	}
	from, to := 0, total
	if total > compareAllUpTo {
		at := max(first, 0)
		from, to = max(0, at-compareBefore), min(total, at+compareAfter)
	}
	section := func(row int) string {
		if row < eventRows {
			return transcript.SectionEvents
		}
		return transcript.SectionTranscript
	}
	// The lines of rows [from, to) of one log.
	lines := func(log *sessionlog.Log, p *fingerprints) (map[int]string, error) {
		var seqs []int
		rowOf := map[int]int{} // seq → row, for events; messages below
		msgRow := map[int]int{}
		h := log.HistoryThrough(log.Len() - 1)
		for row := from; row < to; row++ {
			if row < eventRows {
				if row < len(p.events) {
					seqs = append(seqs, row)
					rowOf[row] = row
				}
			} else if m := row - eventRows; m < len(p.derived) {
				seq := log.HistorySeq(h, m)
				seqs = append(seqs, seq)
				msgRow[seq] = row
			}
		}
		out := map[int]string{}
		err := eachEvent(b.ctx, log, b.hugeLine, seqs, func(e sessionlog.Event) error {
			if row, ok := rowOf[e.Seq]; ok {
				out[row] = eventLine(e, b.lang)
			}
			if row, ok := msgRow[e.Seq]; ok {
				if m := derivedMessage(e); m != nil {
					out[row] = transcript.DescribeMessage(m)
				}
			}
			return nil
		}, func(e rawEvent) error {
			if row, ok := rowOf[e.seq]; ok {
				out[row] = rawLine(e, b.lang)
			}
			if row, ok := msgRow[e.seq]; ok {
				out[row] = rawLine(e, b.lang)
			}
			return nil
		})
		return out, err
	}
	mine, err := lines(b.log, lp)
	if err != nil {
		return err
	}
	theirs, err := lines(ref, rp)
	if err != nil {
		return err
	}
	cmp := &Compare{ReferencePath: refPath, Total: total, First: -1, Rows: []CompareRow{}}
	prev := -1
	for row := from; row < to; row++ {
		l, hasL := mine[row]
		r, hasR := theirs[row]
		cr := CompareRow{N: row + 1, Section: section(row), Learner: "·", Reference: "·",
			Differs: hasL != hasR || l != r, HiddenBefore: row - prev - 1}
		if hasL {
			cr.Learner = cut(l, summaryShown)
		}
		if hasR {
			cr.Reference = cut(r, summaryShown)
		}
		if row == first {
			cmp.First = len(cmp.Rows)
		}
		cmp.Rows = append(cmp.Rows, cr)
		prev = row
	}
	if first < 0 {
		cmp.Summary = labels.Same
	} else {
		cmp.Summary = fmt.Sprintf(labels.FirstDifference, first+1, section(first))
		if first < eventRows {
			for i := range v.Events {
				if v.Events[i].Seq == first {
					v.Events[i].FirstDifference = true
				}
			}
		}
	}
	v.Compare = cmp
	return nil
}
