package inversion

import (
	"fmt"

	"github.com/trellis-fl/trellis/nn"
)

// LastLayer is where a model's last linear layer sits in the flat
// parameter (and gradient) vector: W ([Classes, In], row-major) at Off,
// then b. Label recovery reads only this block: for a softmax
// cross-entropy its bias gradient is p − onehot(y) per sample whatever
// comes before it (convolutions, pooling, dropout, batch norm), so iDLG
// and the counts work on any such model, the CNNs included, where the
// image attacks here (dense layers only) do not.
type LastLayer struct {
	Off, In, Classes int
	// NonNeg says the layer's input is a ReLU output (≥ 0), so LabelOne
	// may pool the weight gradient's rows with the bias.
	NonNeg bool
}

// LastLayerOf locates model m's last layer; any nn model under the softmax
// head qualifies (every kind ends in a linear layer).
func LastLayerOf(m *nn.Model) (LastLayer, error) {
	s := m.Spec()
	if s.Head != "" && s.Head != "softmax" {
		return LastLayer{}, fmt.Errorf("inversion: head %q, want softmax cross-entropy", s.Head)
	}
	in, k := m.FeatureSize(), m.Classes()
	off := m.NumParams() - k*in - k
	if off < 0 {
		return LastLayer{}, fmt.Errorf("inversion: model %s: %d parameters, fewer than its last layer's %d", s.Kind, m.NumParams(), k*in+k)
	}
	// Only logreg, and an MLP without hidden layers, feed the image itself.
	direct := s.Kind == "logreg" || (s.Kind == "mlp" && len(s.Hidden) == 0)
	return LastLayer{Off: off, In: in, Classes: k, NonNeg: !direct}, nil
}

// last is the net's own last layer.
func (n *Net) last() LastLayer {
	l := n.Layers() - 1
	return LastLayer{Off: n.off[l], In: n.Sizes[l], Classes: n.Classes(), NonNeg: l > 0}
}

func (h LastLayer) weightGrad(g []float64) []float64 { return g[h.Off : h.Off+h.Classes*h.In] }
func (h LastLayer) biasGrad(g []float64) []float64 {
	lo := h.Off + h.Classes*h.In
	return g[lo : lo+h.Classes]
}
