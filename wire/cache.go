package wire

import (
	"crypto/ed25519"
	"crypto/sha256"
	"sync"
)

// VerifyCache remembers the outcome of Ed25519 verifications, keyed by a
// SHA-256 digest of (context, public key, signed bytes, signature). It is
// sound: the same key, bytes and signature always verify the same way, so
// a cached answer is the answer a fresh verification would give, whoever
// asks. A simulator shares one cache between the validators (and trust
// layers) of all its nodes, so a broadcast message or a claim copy that
// reaches 50 neighbors costs one verification instead of 50; a real node
// has its own cache or none. Safe for concurrent use.
//
// Its size is bounded: when it holds Max entries it forgets them all
// (results never depend on what the cache holds, only cost does).
type VerifyCache struct {
	mu  sync.Mutex
	m   map[[sha256.Size]byte]bool
	max int

	hits, misses uint64
}

// NewVerifyCache returns a cache of at most max entries (a default of
// 1<<18 when max <= 0).
func NewVerifyCache(max int) *VerifyCache {
	if max <= 0 {
		max = 1 << 18
	}
	return &VerifyCache{m: make(map[[sha256.Size]byte]bool), max: max}
}

// Stats returns the number of cached answers given and of verifications
// run.
func (c *VerifyCache) Stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// verify checks sig over msg under pub with the Ed25519ctx context of
// opts, through the cache when c is not nil.
func (c *VerifyCache) verify(pub ed25519.PublicKey, msg, sig []byte, opts *ed25519.Options) bool {
	if len(pub) != ed25519.PublicKeySize {
		return false
	}
	if c == nil {
		return ed25519.VerifyWithOptions(pub, msg, sig, opts) == nil
	}
	h := sha256.New()
	// Length-prefixed context and message: no two different tuples hash
	// the same bytes.
	h.Write([]byte{byte(len(opts.Context))})
	h.Write([]byte(opts.Context))
	h.Write(pub)
	h.Write(sig)
	var n [8]byte
	for i := range n {
		n[i] = byte(uint64(len(msg)) >> (8 * i))
	}
	h.Write(n[:])
	h.Write(msg)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	c.mu.Lock()
	ok, found := c.m[key]
	if found {
		c.hits++
	}
	c.mu.Unlock()
	if found {
		return ok
	}
	ok = ed25519.VerifyWithOptions(pub, msg, sig, opts) == nil
	c.mu.Lock()
	c.misses++
	if len(c.m) >= c.max {
		clear(c.m)
	}
	c.m[key] = ok
	c.mu.Unlock()
	return ok
}

// VerifyClaim is VerifyClaim through the cache (a nil cache verifies
// directly).
func (c *VerifyCache) VerifyClaim(cl *Claim, pub ed25519.PublicKey) bool {
	if cl == nil || len(pub) != ed25519.PublicKeySize {
		return false
	}
	b, err := claimSigned(cl)
	if err != nil {
		return false
	}
	return c.verify(pub, b, cl.Sig[:], claimOpts)
}

// VerifyEvent is VerifyEvent through the cache (a nil cache verifies
// directly).
func (c *VerifyCache) VerifyEvent(e *Event, src ed25519.PublicKey) bool {
	if e == nil {
		return false
	}
	return c.verify(src, eventSignedBytes(e), e.Sig[:], eventOpts)
}

// VerifyCounter is VerifyCounter through the cache.
func (c *VerifyCache) VerifyCounter(e *Event, peer ed25519.PublicKey) bool {
	if e == nil || !e.Attested {
		return false
	}
	return c.verify(peer, eventSignedBytes(e), e.Counter[:], counterOpts)
}
