package trust

import (
	"fmt"
	"strconv"
)

// Reason says why Ingest did not take a claim into the witness pools.
type Reason uint8

const (
	Accepted Reason = iota // not a rejection

	// Not evidence against anyone (package doc, "Replays and duplicates").
	Duplicate     // an identical copy of the claim already held (another path, or the node's own claim)
	Superseded    // an older version of the source's claim, forwarded within its freshness window
	UnknownSender // the delivering peer is not in the directory: nobody to blame

	// Evidence against the delivering peer: an honest forwarder passes on
	// only claims it accepted itself, so these are its doing.
	Malformed // nil, unknown source, unsorted or repeated neighbors, self or unknown neighbor, too many
	BadHop    // hop 0 from a forwarder, hop > 0 from the source, or hop beyond the limit
	Stale     // a claim more than MaxAge rounds old
	Future    // a claim for a round not yet begun
	Forged    // the source's signature does not verify
	Replay    // the source itself re-sent an older version

	// Evidence against the claim's source: its valid signature proves it
	// signed what is refused.
	Equivocation // two different claims under one version
	Inconsistent // a newer version for an older round than one already accepted
	OverBudget   // more than Budget new claims for one round

	NumReasons int = iota
)

var reasonNames = [NumReasons]string{
	"accepted", "duplicate", "superseded", "unknown_sender",
	"malformed", "bad_hop", "stale", "future", "forged", "replay",
	"equivocation", "inconsistent", "over_budget",
}

// String returns the reason in snake case, as metrics name it.
func (r Reason) String() string {
	if int(r) < NumReasons {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// Evidence reports whether a rejection for r is a spam/replay event q
// against some peer (Rejection.Blamed).
func (r Reason) Evidence() bool { return r >= Malformed && int(r) < NumReasons }

// blamesSource reports whether r is proven against the claim's source
// rather than the peer that delivered it.
func (r Reason) blamesSource() bool { return r >= Equivocation && int(r) < NumReasons }

// Rejection is the error Ingest returns for a claim it did not accept. When
// Reason.Evidence(), one q event was counted against Blamed.
type Rejection struct {
	Reason Reason
	Blamed uint32 // the peer charged with the event (meaningful if Reason.Evidence())
	Detail string
}

func (e *Rejection) Error() string {
	s := "trust: claim " + e.Reason.String()
	if e.Reason.Evidence() {
		s += fmt.Sprintf(" (blamed on node %d)", e.Blamed)
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}
