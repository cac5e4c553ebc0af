package history

import (
	"slices"
	"time"
)

// Interval is a stretch of time, From to To.
type Interval struct {
	From, To time.Time
}

// minGap is the shortest stretch counted as a gap: the sources' times are
// kept to the second (creationTimestamp, managedFields), so that a revision
// created within a second of its workload leaves nothing uncovered between.
const minGap = time.Second

// Uncovered returns the stretches of [from, to] that no interval of covered
// covers, in order, leaving out those shorter than a second.
func Uncovered(from, to time.Time, covered []Interval) []Interval {
	if !from.Before(to) {
		return nil
	}
	in := slices.Clone(covered)
	slices.SortFunc(in, func(a, b Interval) int { return a.From.Compare(b.From) })
	var out []Interval
	at := from
	add := func(end time.Time) {
		if end.Sub(at) >= minGap {
			out = append(out, Interval{From: at, To: end})
		}
	}
	for _, c := range in {
		if !c.From.Before(c.To) || !c.To.After(at) {
			continue
		}
		if c.From.After(to) {
			break
		}
		if c.From.After(at) {
			add(c.From)
		}
		at = c.To
		if !at.Before(to) {
			return out
		}
	}
	add(to)
	return out
}
