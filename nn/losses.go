package nn

import "fmt"

// SampleLosses writes the loss of every sample of src into dst, in the
// order src yields them (evaluation mode: no dropout, running batch-norm
// statistics), and returns how many. dst must hold src.Len() values. The
// membership-inference audit (privacy.LossThresholdAudit) reads a released
// model through these losses on its training and held-out samples.
func (m *Model) SampleLosses(src Batches, dst []float64) (int, error) {
	m.Acquire()
	defer m.Release()
	if len(dst) < src.Len() {
		return 0, fmt.Errorf("sample losses: dst holds %d values, the source %d samples", len(dst), src.Len())
	}
	n := 0
	err := m.eachBatch(src, func(start, b int, logits, _ []float32) error {
		for i := range b {
			l, err := m.head.Loss(logits[i*m.classes:(i+1)*m.classes], m.ybuf[i:i+1], 1, m.classes, nil)
			if err != nil {
				return err
			}
			dst[start+i] = l
		}
		n = start + b
		return nil
	})
	return n, err
}
