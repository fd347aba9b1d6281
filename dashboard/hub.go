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
}

func newHub() *hub { return &hub{wake: make(chan struct{})} }

// add encodes v and appends it; a value that does not encode is dropped
// (and counted by the caller's error).
func (h *hub) add(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	h.events = append(h.events, b)
	close(h.wake)
	h.wake = make(chan struct{})
	return nil
}

// since returns the events from index from on, and a channel closed when
// more arrive.
func (h *hub) since(from int) ([][]byte, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if from < 0 {
		from = 0
	}
	if from > len(h.events) {
		from = len(h.events)
	}
	return h.events[from:len(h.events):len(h.events)], h.wake
}

// all returns every event so far.
func (h *hub) all() [][]byte {
	ev, _ := h.since(0)
	return ev
}
