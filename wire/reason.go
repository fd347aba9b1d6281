package wire

import (
	"errors"
	"strconv"
)

// Reason says why a message was refused. Decode and Validator.Check return
// it inside an *Error, and Validator counts rejections per sender and Reason
// so trust logic can use them as evidence.
type Reason uint8

const (
	None Reason = iota // not a rejection

	// Structural: found without trusting anything in the message.
	Malformed      // truncated, trailing bytes, nonzero reserved bits, inconsistent lengths, nil
	BadVersion     // format version this decoder does not speak
	UnknownKind    // kind code 0 or reserved
	Oversize       // a declared size beyond Limits
	WrongRecipient // addressed to another node
	UnknownSender  // sender not in the directory
	StaleRound     // round older than the receiver's
	FutureRound    // round newer than the receiver's
	BadSignature   // the sender's signature does not verify
	Replay         // sequence number not above the last accepted from this sender this round

	// Content: found after the sender's signature verified, so the sender
	// provably sent it (see Reason.Signed).
	WrongLength       // vector length differs from the expected one
	NonFinite         // NaN or ±Inf in a vector payload
	UnknownSource     // claim from a source not in the directory
	BadHop            // hop 0 from a forwarder, or hop > 0 from the source itself
	SelfNeighbor      // claim lists its own source as neighbor
	DuplicateNeighbor // claim lists a neighbor twice
	UnsortedNeighbors // claim neighbors not increasing
	BadClaimSignature // the source's claim signature does not verify

	NumReasons int = iota
)

var reasonNames = [NumReasons]string{
	None:              "none",
	Malformed:         "malformed",
	BadVersion:        "bad_version",
	UnknownKind:       "unknown_kind",
	Oversize:          "oversize",
	WrongRecipient:    "wrong_recipient",
	UnknownSender:     "unknown_sender",
	StaleRound:        "stale_round",
	FutureRound:       "future_round",
	BadSignature:      "bad_signature",
	Replay:            "replay",
	WrongLength:       "wrong_length",
	NonFinite:         "non_finite",
	UnknownSource:     "unknown_source",
	BadHop:            "bad_hop",
	SelfNeighbor:      "self_neighbor",
	DuplicateNeighbor: "duplicate_neighbor",
	UnsortedNeighbors: "unsorted_neighbors",
	BadClaimSignature: "bad_claim_signature",
}

// String returns the reason in snake case, as metrics and logs name it.
func (r Reason) String() string {
	if int(r) < NumReasons {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// Signed reports whether a rejection for r proves that the claimed sender
// signed the offending message. Validator.Check verifies the signature before
// any of these checks, so no third party can produce such a rejection in the
// sender's name: it is evidence. The other reasons are not: a garbled or
// forged message names any sender it likes, and a replayed (stale, duplicate,
// misdelivered) message carries a valid signature its sender never meant for
// this receiver or round. Their counts are only as trustworthy as the
// transport's knowledge of who actually sent the bytes.
func (r Reason) Signed() bool { return r >= WrongLength && int(r) < NumReasons }

// Error is every error Decode, AppendEncode and Validator.Check return about
// a message (invalid Limits, a caller's mistake, are plain errors).
type Error struct {
	Reason Reason
	Detail string
}

func (e *Error) Error() string {
	if e.Detail == "" {
		return "wire: " + e.Reason.String()
	}
	return "wire: " + e.Reason.String() + ": " + e.Detail
}

// ReasonOf returns the Reason of an *Error in err's chain, or None for nil
// or an error this package did not produce.
func ReasonOf(err error) Reason {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return None
}

func reject(r Reason, detail string) *Error { return &Error{Reason: r, Detail: detail} }
