package nn

import (
	"fmt"
	"math"
)

// State is the SGD momentum buffer (empty without momentum), for
// checkpoints; SetState puts one back.
func (o *SGD) State() []float32 { return o.v }

// SetState restores a State.
func (o *SGD) SetState(s []float32) error {
	if len(s) != len(o.v) {
		return fmt.Errorf("sgd state: %d floats, want %d", len(s), len(o.v))
	}
	copy(o.v, s)
	return nil
}

// State is Adam's first and second moments followed by the step count
// (as the bits of one float32 pair: low and high 32 bits), for
// checkpoints; SetState puts one back.
func (o *Adam) State() []float32 {
	s := make([]float32, 0, len(o.m)+len(o.v)+2)
	s = append(s, o.m...)
	s = append(s, o.v...)
	t := uint64(o.t)
	return append(s, math.Float32frombits(uint32(t)), math.Float32frombits(uint32(t>>32)))
}

// SetState restores a State.
func (o *Adam) SetState(s []float32) error {
	if len(s) != len(o.m)+len(o.v)+2 {
		return fmt.Errorf("adam state: %d floats, want %d", len(s), len(o.m)+len(o.v)+2)
	}
	copy(o.m, s[:len(o.m)])
	copy(o.v, s[len(o.m):len(o.m)+len(o.v)])
	k := len(o.m) + len(o.v)
	o.t = int(uint64(math.Float32bits(s[k])) | uint64(math.Float32bits(s[k+1]))<<32)
	return nil
}
