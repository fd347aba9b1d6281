// Package wire holds what nodes say to each other: message types, their compact
// binary encoding, Ed25519 identities and signatures, and the receive-side
// validation that keeps malformed, forged or non-finite input away from strategies.
//
// # Messages
//
// A Message is a Header (kind, sender, recipient, round, sequence), one body
// and the sender's signature. Kind 1 is a float32 vector (a model, direction
// or gradient, with an optional tag naming it); kind 2 is a DMTT topology
// claim (the DMTT paper, Algorithms 1–3). Kinds 3–6 are the privacy layers'
// (docs/methods/privacy.md, docs/methods/secure-aggregation.md): 3 a masked integer vector (secure aggregation's masked
// input), 4 advertised public keys, 5 secret shares, 6 ciphertexts; each
// has its own size limit and content rule (kinds.go), and the layer that
// owns the kind checks what the bytes mean. Kind 7 carries signed edge
// events (event.go) in a blob body. Kind codes 0 and 8–255 are refused by this version, leaving room for later kinds.
//
// # Format (version 1)
//
// All integers are little-endian; floats are their raw IEEE 754 bits, so a
// round trip is bit-exact (-0, subnormals, NaN payloads). Every byte is
// determined by the Message, so decoding then encoding gives the input back.
//
//	offset  size  field
//	     0     1  format version (1)
//	     1     1  kind (1 vector, 2 claim, 3 masked, 4 key, 5 share, 6 cipher, 7 event)
//	     2     2  flags, zero in version 1 (room for e.g. compression)
//	     4     4  from: sender node id
//	     8     4  to: recipient node id, 0xFFFFFFFF = Broadcast
//	    12     8  round
//	    20     8  seq
//	    28     4  L: body length in bytes
//	    32     L  body (below)
//	  32+L    64  sender's Ed25519 signature
//
// Vector body (floats start 4-byte aligned, so the bytes can serve as a
// []float32 in place on a little-endian host):
//
//	    0     4  n: number of floats
//	    4     1  T: tag length (≤ 255)
//	    5     T  tag bytes
//	  5+T     P  zero padding, P = (-(5+T)) mod 4
//	5+T+P    4n  floats
//
// Claim body (92 + 4k bytes):
//
//	   0     4  source node id
//	   4     4  k: number of neighbors
//	   8     8  round the claim is for
//	  16     8  version
//	  24     1  hop (0 at the source, +1 per forward)
//	  25     3  reserved, zero
//	  28    4k  neighbor ids, strictly increasing
//	28+4k   64  source's Ed25519 claim signature
//
// Masked and blob bodies (kinds 3–6) share the vector's framing: a count,
// the tag and its padding, then n uint32 values (masked) or n bytes
// zero-padded to a multiple of 4 (key, share, cipher). A key advertisement
// holds whole 32-byte keys (X25519); shares and ciphertexts are not empty.
//
//	    0     4  n: number of values (masked) or bytes (blob)
//	    4     1  T: tag length (≤ 255)
//	    5     T  tag bytes
//	  5+T     P  zero padding, P = (-(5+T)) mod 4
//	5+T+P    4n  uint32 values (masked), or n bytes + zero padding to 4 (blob)
//
// # Signatures
//
// A message signature is Ed25519ctx (RFC 8032) with context
// "trellis/wire/v1 message" over SHA-256 of the encoding without its last 64
// bytes: the hash streams from the Message's fields without building the
// encoding, and SHA-256 ran at 1.5 GB/s against SHA-512's 0.8 GB/s on the
// development machine (SHA-NI), nearly halving the cost of verifying a model
// compared with Ed25519ph, at the same 128-bit security level. A
// claim signature is Ed25519ctx with context "trellis/wire/v1 claim" over
// claim body bytes 0–23 followed by the neighbor list: everything but hop,
// so forwarding increments hop without the source's key; the forwarder's own
// message signature covers the hop it sent. Simulated identities derive from
// (experiment seed, node id) (NewIdentity), so runs are reproducible to the byte.
//
// The digest streams from the Message: on a little-endian host (every one
// trellis runs on) a float32 or uint32 payload is hashed where it lies in
// memory, since its bytes already are the encoding; a big-endian host
// converts it through a small scratch buffer. Either way the digest is
// SHA-256 of exactly the encoded bytes (TestDigestMatchesEncoding), so the
// Python peer and any other implementation sign and verify the same thing.
//
// # Simulator-only digest memo
//
// A simulator hands one *Message to every out-neighbour of a broadcast, and
// every receiver's Validator would hash the same ~1 MB again. A DigestMemo
// shared by the validators (ValidatorConfig.Digests) lets the first receiver
// hash it and the others reuse the digest, while the simulator has the phase
// open: it opens the memo after the adversary's messages are made and
// closes it, forgetting every entry, once all receivers have taken the
// phase's messages. This is sound because nothing modifies a message during
// delivery (a node's outbox payloads are read-only once returned, and a
// pointer shared by 50 receivers already relies on it), and because anything
// tampered with or replaced is a new Message and is hashed on its own. The
// Ed25519 verification itself still happens per receiver, or comes from the
// VerifyCache. A node on a network never has a memo: it hashes the bytes it
// received. Per-recipient messages (DMTT's one vector per peer) differ in
// their header, which the hash reads first, so they are not helped, and the
// signed bytes stay as they are for the sake of every other implementation.
//
// # Validation
//
// Decode checks form and Limits on any bytes without panicking or allocating
// beyond them. Validator.Check applies the protocol rules of one receiving
// node (recipient, known sender, current round, signature, replay, length,
// finiteness, claim structure) and counts each rejection per sender and
// Reason; Reason.Signed says which rejections are evidence against the sender
// rather than against whoever delivered the bytes. Replay protection needs a
// sender's Seq to increase over its messages within a round, so drivers must
// deliver one sender's messages to a receiver in the order they were sent.
//
// # Sizes known before decoding
//
// Every kind has an exact or bounded body size once the model and the
// protocol's parameters are fixed (sizes.go): VectorBody and MaskedBody for
// exactly one element per parameter, ClaimBody for at most so many
// neighbours, BlobBody and EventBody for keys, shares, ciphertexts and
// event batches of their layer's sizes. A receiver compares a message's
// kind and body length with the Bound it expects before it verifies or
// reads anything: BodyLen for a message in memory, PeekHeader for encoded
// bytes (the header and its declared length, nothing decoded). Decode
// itself never allocates more than the bytes it is given hold: every
// declared count is compared with the body's length first.
package wire
