package attack

import (
	"cmp"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/trellis-fl/trellis/nn"
)

var mlp = nn.Spec{Kind: "mlp", Input: []int{784}, Classes: 10, Hidden: []int{256, 128}}

// honestVector returns d values of an honest-looking payload.
func honestVector(d int) []float32 {
	r := rand.New(rand.NewPCG(1, 2))
	x := make([]float32, d)
	for i := range x {
		x[i] = float32(0.1 * r.NormFloat64())
	}
	return x
}

func stream(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 99)) }

// params has every required parameter set.
var params = Params{Sigma: 1, Percent: 10, Model: &mlp}

func TestNew(t *testing.T) {
	p := params
	for _, name := range Names() {
		a, err := New(name, p)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		if want := cmp.Or(aliases[name], name); a.Name() != want {
			t.Errorf("New(%q).Name() = %q", name, a.Name())
		}
	}
	_, err := New("alie_typo", p)
	if err == nil || !strings.Contains(err.Error(), `"alie_typo"`) || !strings.Contains(err.Error(), strings.Join(Names(), ", ")) {
		t.Errorf("unknown attack: err = %v, want the name and the valid names", err)
	}
	if a, _ := New("scaling", Params{}); a.(Scaling).factor() != 10 {
		t.Errorf("default scale = %v, want 10", a.(Scaling).factor())
	}
}

// Out-of-range parameters are errors naming the parameter, the value and
// the allowed range.
func TestNewOutOfRange(t *testing.T) {
	cases := []struct {
		name string
		p    Params
		want []string
	}{
		{"gaussian", Params{}, []string{"sigma", "= 0", "(0, 1e+30]"}},
		{"gaussian", Params{Sigma: -2}, []string{"sigma", "= -2", "(0, 1e+30]"}},
		{"gaussian", Params{Sigma: math.NaN()}, []string{"sigma", "NaN"}},
		{"gaussian", Params{Sigma: 1e31, Replace: true}, []string{"sigma", "1e+31"}},
		{"scaling", Params{Scale: math.Inf(1)}, []string{"scale", "+Inf", "[-1e+30, 1e+30]"}},
		{"scaling", Params{Scale: math.NaN()}, []string{"scale", "NaN"}},
		{"random", Params{}, []string{"random", "Model"}},
		{"random", Params{Model: &nn.Spec{Kind: "mlp", Input: []int{4}, Classes: 1}}, []string{"random", "classes"}},
	}
	for _, c := range cases {
		_, err := New(c.name, c.p)
		if err == nil {
			t.Errorf("New(%s, %+v) accepted", c.name, c.p)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("New(%s, %+v): error %q does not say %q", c.name, c.p, err, w)
			}
		}
	}
	// Values built directly are checked when they craft.
	x := make([]float32, 3)
	if err := (Scaling{S: math.NaN()}).Craft(x, nil, x, 0, 1, nil); err == nil {
		t.Error("Scaling{S: NaN} crafted a vector")
	}
	if err := (Gaussian{}).Craft(x, nil, x, 0, 1, stream(1)); err == nil {
		t.Error("Gaussian{} (sigma 0) crafted a vector")
	}
}

func TestLengthMismatch(t *testing.T) {
	for _, name := range Names() {
		a, err := New(name, params)
		if err != nil {
			t.Fatal(err)
		}
		err = a.Craft(make([]float32, 3), nil, make([]float32, 4), 0, 1, stream(1))
		if !errors.Is(err, ErrLength) || !strings.Contains(err.Error(), "3") || !strings.Contains(err.Error(), "4") {
			t.Errorf("%s: err = %v, want ErrLength naming both lengths", name, err)
		}
	}
	r, _ := NewRandom(mlp)
	if err := r.Craft(make([]float32, 5), nil, make([]float32, 5), 0, 1, stream(1)); !errors.Is(err, ErrLength) || !strings.Contains(err.Error(), "235146") {
		t.Errorf("random with a payload of the wrong model size: err = %v", err)
	}
}

// none, sign_flip and scaling against their definitions, also writing into
// the honest slice itself.
func TestDeterministicAttacks(t *testing.T) {
	b := honestVector(1000)
	b[0], b[1] = float32(math.Copysign(0, -1)), math.MaxFloat32/20
	cases := []struct {
		a    Attack
		want func(x float32) float32
	}{
		{None{}, func(x float32) float32 { return x }},
		{SignFlip{}, func(x float32) float32 { return -x }},
		{Scaling{}, func(x float32) float32 { return float32(10 * float64(x)) }},
		{Scaling{S: -0.5}, func(x float32) float32 { return float32(-0.5 * float64(x)) }},
	}
	for _, c := range cases {
		dst := make([]float32, len(b))
		if err := c.a.Craft(dst, nil, b, 3, 4, nil); err != nil {
			t.Fatalf("%s: %v", c.a.Name(), err)
		}
		inPlace := slices.Clone(b)
		if err := c.a.Craft(inPlace, nil, inPlace, 3, 4, nil); err != nil {
			t.Fatalf("%s in place: %v", c.a.Name(), err)
		}
		for i, x := range b {
			w := c.want(x)
			if math.Float32bits(dst[i]) != math.Float32bits(w) || math.Float32bits(inPlace[i]) != math.Float32bits(w) {
				t.Fatalf("%s: coordinate %d of %v = %v (in place %v), want %v", c.a.Name(), i, x, dst[i], inPlace[i], w)
			}
		}
	}
}
