package wire

import (
	"crypto/sha256"
	"sync"
)

// DigestMemo remembers message digests by *Message pointer, for a simulator
// only. A simulator hands one broadcast *Message to every out-neighbour, and
// each receiver's Validator would hash the same ~1 MB of payload again (with
// 50 neighbours, 50 SHA-256 passes of which 49 repeat the first); with a memo
// shared by all validators, the first receiver hashes and the others reuse its
// digest. The signature itself is still verified (or answered by the
// VerifyCache) for every receiver.
//
// It is sound only under a contract a simulator can keep and a network
// cannot, which is why a validator consults it only between Open and Close:
//   - The driver calls Open before it delivers a phase's messages and Close
//     once every receiver has taken them. Close forgets every entry, so a
//     pointer never outlives its phase in the memo (a node may reuse a
//     Message struct in a later phase), and memory is bounded by one phase's
//     outbox. While open, the memo holds its keys, so no address can be
//     freed and reused for another message within the phase.
//   - No message is modified while the phase is open: the sender's payloads
//     are read-only once its outbox returns them (node.Outbox), and receivers
//     never write what they are delivered. A simulator that sends one pointer
//     to many receivers already depends on this: a receiver that wrote it
//     would change what the next receiver is given.
//   - Whatever an adversary replaces or tampers with is a new Message (a new
//     pointer), made before Open, so it is hashed on its own.
//
// Senders: a simulated node signs through SignNoted, which leaves the digest
// it has just signed in the memo, so even the first receiver hashes nothing
// (without it every payload was hashed twice, once to sign and once to
// verify: 8 % of a 100-node FedAvg round's CPU time). That extends the
// contract: no message is modified after it is signed (a re-signed message
// notes its new digest, replacing the old). The notes of a phase are made
// before its Open and, like the receivers' digests, forgotten at its Close;
// a driver that does not open the memo must still close it after each
// phase, or the notes would pile up.
//
// A real node never has one: it must hash the bytes it received. Safe for
// concurrent use: validators of different nodes run on different
// goroutines, and a pointer's digest is computed once, the others waiting
// for it.
type DigestMemo struct {
	mu   sync.Mutex
	open bool
	m    map[*Message]*memoEntry

	hits, misses uint64
}

type memoEntry struct {
	once sync.Once
	sum  [sha256.Size]byte
	err  error
}

// NewDigestMemo returns a closed memo.
func NewDigestMemo() *DigestMemo { return &DigestMemo{m: make(map[*Message]*memoEntry)} }

// Open starts a delivery phase: from now until Close, validators sharing the
// memo hash each *Message once.
func (d *DigestMemo) Open() {
	d.mu.Lock()
	d.open = true
	d.mu.Unlock()
}

// Close ends the phase and forgets every digest; validators hash every
// message themselves again until the next Open.
func (d *DigestMemo) Close() {
	d.mu.Lock()
	d.open = false
	clear(d.m)
	d.mu.Unlock()
}

// Stats returns the number of digests reused and computed through the memo
// (messages checked while it was closed count in neither).
func (d *DigestMemo) Stats() (hits, misses uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hits, d.misses
}

// note records sum as m's digest until the next Close, replacing any
// earlier one (a nil memo records nothing).
func (d *DigestMemo) note(m *Message, sum [sha256.Size]byte) {
	if d == nil {
		return
	}
	e := &memoEntry{sum: sum}
	e.once.Do(func() {}) // computed: receivers take sum as it is
	d.mu.Lock()
	d.m[m] = e
	d.mu.Unlock()
}

// digest returns m's digest, computed with dg unless the phase already has
// it; a nil or closed memo computes it with dg directly.
func (d *DigestMemo) digest(m *Message, dg *digester) ([sha256.Size]byte, error) {
	if d == nil {
		return dg.digest(m)
	}
	d.mu.Lock()
	if !d.open {
		d.mu.Unlock()
		return dg.digest(m)
	}
	e := d.m[m]
	if e == nil {
		e = &memoEntry{}
		d.m[m] = e
		d.misses++
	} else {
		d.hits++
	}
	d.mu.Unlock()
	// Outside the lock: other pointers' digests go on in parallel, and a
	// second receiver of this one waits for the first's result.
	e.once.Do(func() { e.sum, e.err = dg.digest(m) })
	return e.sum, e.err
}
