package nn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The tensors cover the flat parameters and state exactly once, in order.
func TestTensorsCoverTheModel(t *testing.T) {
	for _, spec := range []Spec{
		{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{16, 8}, Classes: 10},
		{Kind: "mlp", Input: []int{1, 28, 28}, Hidden: []int{16}, Classes: 10, BatchNorm: true, Dropout: 0.5},
		{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10},
		{Kind: "femnist_cnn", Input: []int{1, 28, 28}, Classes: 62},
	} {
		m, err := Build(spec, 3, Options{Batch: 4})
		if err != nil {
			t.Fatal(err)
		}
		m.Init(3)
		var params, state int
		for _, ts := range m.Tensors() {
			if strings.HasPrefix(ts.Name[strings.LastIndexByte(ts.Name, '.')+1:], "running_") {
				state += len(ts.Data)
			} else {
				params += len(ts.Data)
			}
		}
		if params != m.NumParams() || state != len(m.State()) {
			t.Errorf("%s: tensors hold %d parameters and %d state values, the model %d and %d", spec.Kind, params, state, m.NumParams(), len(m.State()))
		}
		m.Close()
	}
}

// The file parses by the format's definition (read here by hand) to the
// model's values, and — where python3 with numpy is installed — numpy
// reads it back to the same values.
func TestSafetensorsRoundTrip(t *testing.T) {
	m, err := Build(Spec{Kind: "lenet5", Input: []int{1, 28, 28}, Classes: 10}, 7, Options{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.Init(7)
	var b bytes.Buffer
	if err := m.WriteSafetensors(&b, map[string]string{"round": "3"}); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	hl := binary.LittleEndian.Uint64(raw[:8])
	if (8+hl)%8 != 0 {
		t.Errorf("data starts at %d, not 8-byte aligned", 8+hl)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(raw[8:8+hl], &header); err != nil {
		t.Fatal(err)
	}
	data := raw[8+hl:]
	for _, ts := range m.Tensors() {
		var e struct {
			Dtype   string `json:"dtype"`
			Shape   []int  `json:"shape"`
			Offsets [2]int `json:"data_offsets"`
		}
		if err := json.Unmarshal(header[ts.Name], &e); err != nil {
			t.Fatalf("%s: %v", ts.Name, err)
		}
		if e.Dtype != "F32" || e.Offsets[1]-e.Offsets[0] != 4*len(ts.Data) {
			t.Fatalf("%s: header %+v", ts.Name, e)
		}
		for k, v := range ts.Data {
			if got := math.Float32frombits(binary.LittleEndian.Uint32(data[e.Offsets[0]+4*k:])); got != v {
				t.Fatalf("%s[%d] = %v in the file, %v in the model", ts.Name, k, got, v)
			}
		}
	}
	// Debian's /usr/bin/python3 first: python3-numpy installs there.
	python := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import numpy").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("no python3 with numpy (apt-get install python3-numpy): the numpy read-back is skipped")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	// numpy only, as a PyTorch user without the safetensors package would.
	script := `
import json, struct, sys, numpy as np
raw = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", raw[:8])[0]
h = json.loads(raw[8:8+n]); data = raw[8+n:]
for k in sorted(h):
    if k == "__metadata__": continue
    a, b = h[k]["data_offsets"]
    x = np.frombuffer(data[a:b], dtype="<f4").reshape(h[k]["shape"])
    print(k, list(x.shape), repr(float(x.sum(dtype=np.float64))), repr(float(x.flat[0])))
`
	out, err := exec.Command(python, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("numpy: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		name, rest, _ := strings.Cut(line, " ")
		got[name] = rest
	}
	for _, ts := range m.Tensors() {
		var sum float64
		for _, v := range ts.Data {
			sum += float64(v)
		}
		line, ok := got[ts.Name]
		if !ok {
			t.Fatalf("numpy did not read %s", ts.Name)
		}
		shape, _ := json.Marshal(ts.Shape)
		if !strings.HasPrefix(line, strings.ReplaceAll(string(shape), ",", ", ")) {
			t.Errorf("%s: numpy shape %s, want %v", ts.Name, line, ts.Shape)
		}
		f := strings.Fields(line)
		var numSum, first float64
		if err := json.Unmarshal([]byte(f[len(f)-2]), &numSum); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(f[len(f)-1]), &first); err != nil {
			t.Fatal(err)
		}
		if first != float64(ts.Data[0]) || math.Abs(numSum-sum) > 1e-9*(1+math.Abs(sum)) {
			t.Errorf("%s: numpy reads sum %v first %v, the model has %v and %v", ts.Name, numSum, first, sum, ts.Data[0])
		}
	}
}
