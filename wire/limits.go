package wire

import (
	"errors"
	"fmt"
	"math"
)

// Limits bound what a receiver accepts, so that a hostile peer cannot make it
// allocate or hash without bound. Every limit is checked against the sizes a
// message declares before anything is allocated. A zero field takes its
// default (see DefaultLimits), so Limits{} is usable as is.
type Limits struct {
	// MaxFloats bounds a vector payload. Default 1<<24 (16.7 M floats,
	// 64 MiB): room for a ResNet-18 (11.7 M), far above the MLPs of the
	// experiments.
	MaxFloats int
	// MaxNeighbors bounds a claim's neighbor list. Default 4096: a complete
	// graph of a thousand nodes fits, and trust logic does work per listed
	// edge, so a larger list is a cost a peer should not be able to impose.
	MaxNeighbors int
	// MaxTagBytes bounds a payload tag. Default 32; at most MaxTagLen.
	MaxTagBytes int
	// MaxBlobBytes bounds the bytes of a key, share or ciphertext message.
	// Default 4·MaxFloats (as many bytes as the largest vector; 64 MiB).
	MaxBlobBytes int
	// MaxMessageBytes bounds the encoded size. Default: the largest vector
	// message the other limits allow.
	MaxMessageBytes int
}

// DefaultLimits returns the limits a zero Limits stands for.
func DefaultLimits() Limits { return Limits{}.withDefaults() }

// maxEncodableFloats keeps a vector body's length within the header's uint32.
const maxEncodableFloats = (1<<32 - 1 - vectorFixed - MaxTagLen - 3) / 4

func (l Limits) withDefaults() Limits {
	if l.MaxFloats == 0 {
		l.MaxFloats = 1 << 24
	}
	if l.MaxNeighbors == 0 {
		l.MaxNeighbors = 4096
	}
	if l.MaxTagBytes == 0 {
		l.MaxTagBytes = 32
	}
	if l.MaxBlobBytes == 0 && l.MaxFloats > 0 {
		l.MaxBlobBytes = int(min(4*uint64(l.MaxFloats), uint64(maxEncodableBlob), uint64(math.MaxInt)))
	}
	if l.MaxMessageBytes == 0 && l.MaxFloats > 0 && l.MaxFloats <= maxEncodableFloats &&
		l.MaxTagBytes > 0 && l.MaxTagBytes <= MaxTagLen {
		// In uint64, capped at the largest int, for 32-bit platforms.
		v := uint64(HeaderSize+SignatureSize+vectorBodySize(l.MaxTagBytes, 0)) + 4*uint64(l.MaxFloats)
		c := uint64(HeaderSize+SignatureSize+claimFixed) + 4*uint64(max(l.MaxNeighbors, 0))
		bl := uint64(HeaderSize+SignatureSize+arrayPrefixSize(l.MaxTagBytes)) + pad4(uint64(max(l.MaxBlobBytes, 0)))
		l.MaxMessageBytes = int(min(max(v, c, bl), uint64(math.MaxInt)))
	}
	return l
}

// Validate reports a limit that is negative or beyond what the format can
// encode. Zero fields are valid (they mean the default).
func (l Limits) Validate() error {
	if l.MaxFloats < 0 || l.MaxNeighbors < 0 || l.MaxTagBytes < 0 || l.MaxMessageBytes < 0 || l.MaxBlobBytes < 0 {
		return errors.New("wire: negative limit")
	}
	if l.MaxFloats > maxEncodableFloats {
		return fmt.Errorf("wire: MaxFloats %d above the format's %d", l.MaxFloats, maxEncodableFloats)
	}
	if l.MaxTagBytes > MaxTagLen {
		return fmt.Errorf("wire: MaxTagBytes %d above the format's %d", l.MaxTagBytes, MaxTagLen)
	}
	if uint64(l.MaxBlobBytes) > maxEncodableBlob {
		return fmt.Errorf("wire: MaxBlobBytes %d above the format's %d", l.MaxBlobBytes, uint64(maxEncodableBlob))
	}
	if l.MaxNeighbors > maxEncodableNeighbors {
		return fmt.Errorf("wire: MaxNeighbors %d above the format's %d", l.MaxNeighbors, maxEncodableNeighbors)
	}
	return nil
}

const maxEncodableNeighbors = (1<<32 - 1 - claimFixed) / 4
