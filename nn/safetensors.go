package nn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
)

// Tensor is one named parameter or state tensor of a model, in PyTorch's
// layout: a linear layer's weight is [out, in], a convolution's [Cout,
// Cin, k, k] (the im2col order), batch norm's weight, bias, running_mean
// and running_var are [C].
type Tensor struct {
	Name  string
	Shape []int
	Data  []float32 // a view into the model's parameters or state
}

// tensorLayer is a layer with parameters or state to export.
type tensorLayer interface {
	tensors(prefix string) []Tensor
}

func (l *linear) tensors(p string) []Tensor {
	return []Tensor{{p + "weight", []int{l.out, l.in}, l.w}, {p + "bias", []int{l.out}, l.b}}
}

func (c *conv2d) tensors(p string) []Tensor {
	return []Tensor{{p + "weight", []int{c.cout, c.cin, c.k, c.k}, c.wt}, {p + "bias", []int{c.cout}, c.b}}
}

func (b *batchNorm) tensors(p string) []Tensor {
	return []Tensor{{p + "weight", []int{b.c}, b.gamma}, {p + "bias", []int{b.c}, b.beta},
		{p + "running_mean", []int{b.c}, b.rmean}, {p + "running_var", []int{b.c}, b.rvar}}
}

// Tensors lists the model's tensors, named "layers.I.weight" (I the index of
// the layer in Describe's order, parameterless layers counted too, as
// PyTorch's nn.Sequential numbers them). They cover every parameter and
// state value exactly once.
func (m *Model) Tensors() []Tensor {
	var out []Tensor
	for i, l := range m.layers {
		if t, ok := l.(tensorLayer); ok {
			out = append(out, t.tensors(fmt.Sprintf("layers.%d.", i))...)
		}
	}
	return out
}

// WriteSafetensors writes the model's tensors in the safetensors format
// (huggingface/safetensors: an 8-byte little-endian header length, a JSON
// header naming each tensor's dtype, shape and byte range, then the
// little-endian data), loadable in PyTorch with safetensors.torch.load_file
// and readable with numpy alone. meta goes into the header's
// "__metadata__" (string values only, as the format requires).
func (m *Model) WriteSafetensors(w io.Writer, meta map[string]string) error {
	ts := m.Tensors()
	type entry struct {
		Dtype   string `json:"dtype"`
		Shape   []int  `json:"shape"`
		Offsets [2]int `json:"data_offsets"`
	}
	header := map[string]any{}
	if len(meta) > 0 {
		header["__metadata__"] = meta
	}
	off := 0
	for _, t := range ts {
		n := 1
		for _, d := range t.Shape {
			n *= d
		}
		if n != len(t.Data) {
			return fmt.Errorf("nn: tensor %s has %d values for shape %v", t.Name, len(t.Data), t.Shape)
		}
		header[t.Name] = entry{"F32", slices.Clone(t.Shape), [2]int{off, off + 4*n}}
		off += 4 * n
	}
	h, err := json.Marshal(header) // map keys sorted: the same model, the same bytes
	if err != nil {
		return err
	}
	// The data starts 8-byte aligned, as the reference writer pads it.
	if pad := (8 - len(h)%8) % 8; pad > 0 {
		h = append(h, bytes.Repeat([]byte{' '}, pad)...)
	}
	var n [8]byte
	binary.LittleEndian.PutUint64(n[:], uint64(len(h)))
	buf := make([]byte, 0, 8+len(h)+off)
	buf = append(buf, n[:]...)
	buf = append(buf, h...)
	for _, t := range ts {
		for _, v := range t.Data {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(v))
		}
	}
	_, err = w.Write(buf)
	return err
}
