package feed

import (
	"sync"
	"time"
)

// notifyKind says which handler a notification came from.
type notifyKind uint8

const (
	notifyAdd notifyKind = iota
	notifyUpdate
	notifyDelete
	// notifyOwner is an OwnerLookup's report of an owner change.
	notifyOwner
	// notifyPosition is a position reached without a notification (Mark).
	notifyPosition
)

// notification is one event handler call, as received.
type notification struct {
	kind   notifyKind
	source int
	// obj is the new object, for deletions the deleted object or its
	// tombstone, for notifyOwner an OwnerChange.
	obj any
	// owner is, for notifyOwner, the scope whose lookup reported the change.
	owner *OwnerScope
	// initial is set for OnAdd calls that deliver the informer's first list.
	initial bool
	time    time.Time
	// pos and gap are the notification's Mark.
	pos string
	gap *Gap
}

// queue is an unbounded FIFO of notifications. push never blocks beyond a short
// critical section, which is what keeps informers running at full speed while a
// terminal or a pipe reader is slow; the price is memory while the reader lags.
// A client-go workqueue would bound memory by coalescing the notifications of a
// key, but coalescing is losing intermediate states, which a feed must not do.
type queue struct {
	mu    sync.Mutex
	items []notification
	// ready holds a token while items is non-empty and the consumer may be asleep.
	ready chan struct{}
}

func newQueue() *queue {
	return &queue{ready: make(chan struct{}, 1)}
}

func (q *queue) push(n notification) {
	q.mu.Lock()
	q.items = append(q.items, n)
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns everything queued, in order, and leaves spare, emptied, as the
// new backing array so the two slices are reused in turn.
func (q *queue) take(spare []notification) []notification {
	clear(spare)
	q.mu.Lock()
	items := q.items
	q.items = spare[:0]
	q.mu.Unlock()
	return items
}
