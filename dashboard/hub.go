package dashboard

import (
	"encoding/json"
	"sync"
)

// hub is the ordered list of events every viewer reads. Adding an event
// takes a lock and appends; it never waits for a viewer.
type hub struct {
	mu     sync.Mutex
	events [][]byte
	wake   chan struct{} // closed and replaced when an event is added
	closed bool
	ended  bool // the last event is the end: no more will be added
}

func newHub() *hub { return &hub{wake: make(chan struct{})} }

// add encodes v and appends it; a value that does not encode is dropped
// (and counted by the caller's error).
func (h *hub) add(v any) error { return h.push(v, false) }

// end appends v as the last event: later ones are dropped.
func (h *hub) end(v any) error { return h.push(v, true) }

func (h *hub) push(v any, last bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.ended {
		return nil
	}
	h.events = append(h.events, b)
	h.ended = last
	close(h.wake)
	h.wake = make(chan struct{})
	return nil
}

// since returns the events from index from on, and a channel closed when
// more arrive.
func (h *hub) since(from int) ([][]byte, <-chan struct{}) {
	evs, wake, _ := h.sinceEnd(from)
	return evs, wake
}

// sinceEnd is since, and whether the list has ended (end).
func (h *hub) sinceEnd(from int) ([][]byte, <-chan struct{}, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if from < 0 {
		from = 0
	}
	if from > len(h.events) {
		from = len(h.events)
	}
	return h.events[from:len(h.events):len(h.events)], h.wake, h.ended
}

// all returns every event so far.
func (h *hub) all() [][]byte {
	ev, _ := h.since(0)
	return ev
}
