package vec

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/trellis-fl/trellis/internal/cpu"
)

func TestKernelsAgainstHandValues(t *testing.T) {
	x := []float32{1, -2, 3}
	y := []float32{4, 5, -6}
	if got := Dot(x, y); got != 4-10-18 {
		t.Errorf("Dot = %v, want -24", got)
	}
	if got := SumSq(x); got != 14 {
		t.Errorf("SumSq = %v, want 14", got)
	}
	if got := SumAbs(x); got != 6 {
		t.Errorf("SumAbs = %v, want 6", got)
	}
	if got := Norm([]float32{3, 4}); got != 5 {
		t.Errorf("Norm = %v, want 5", got)
	}
	if got := SqDist(x, y); got != 9+49+81 {
		t.Errorf("SqDist = %v, want 139", got)
	}
	z := append([]float32(nil), y...)
	Axpy(2, x, z)
	want := []float32{6, 1, 0}
	for i := range z {
		if z[i] != want[i] {
			t.Fatalf("Axpy = %v, want %v", z, want)
		}
	}
	Scale(-1, z)
	if z[0] != -6 || z[1] != -1 || z[2] != 0 {
		t.Errorf("Scale = %v", z)
	}
	d := make([]float32, 3)
	Sub(d, x, y)
	if d[0] != -3 || d[1] != -7 || d[2] != 9 {
		t.Errorf("Sub = %v", d)
	}
	Add(d, x, y)
	if d[0] != 5 || d[1] != 3 || d[2] != -3 {
		t.Errorf("Add = %v", d)
	}
}

func TestAllFinite(t *testing.T) {
	if ok, i := AllFinite([]float32{1, 2}); !ok || i != -1 {
		t.Errorf("finite slice reported bad at %d", i)
	}
	if ok, i := AllFinite([]float32{1, float32(math.NaN()), 2}); ok || i != 1 {
		t.Errorf("NaN not found: ok=%v i=%d", ok, i)
	}
	if ok, i := AllFinite([]float32{float32(math.Inf(-1))}); ok || i != 0 {
		t.Errorf("-Inf not found: ok=%v i=%d", ok, i)
	}
}

func TestLengthMismatchPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Dot on different lengths did not panic")
		}
	}()
	Dot([]float32{1}, []float32{1, 2})
}

func TestFloat64Accumulation(t *testing.T) {
	// 1e7 ones: a float32 accumulator stalls at 2^24 = 16777216 but not here;
	// use 2^24+2 elements so the float32 sum would be visibly wrong.
	n := 1<<24 + 2
	x := make([]float32, n)
	Fill(x, 1)
	if got := SumSq(x); got != float64(n) {
		t.Errorf("SumSq of %d ones = %v", n, got)
	}
}

func TestAllFiniteEveryPosition(t *testing.T) {
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	for n := 1; n < 100; n++ {
		for pos := 0; pos < n; pos++ {
			for _, b := range bad {
				x := make([]float32, n)
				Fill(x, 3.4e38)
				x[pos] = b
				if ok, i := AllFinite(x); ok || i != pos {
					t.Fatalf("n=%d: %v at %d reported as ok=%v i=%d", n, b, pos, ok, i)
				}
			}
		}
	}
}

// TestNonFiniteKernelAgreesWithPortable: the AVX2 prefix scan and the
// portable scan agree, and AllFinite finds the first bad element, on random
// finite data with NaNs and infinities at random positions, at 32-lane
// block boundaries and at the last element.
func TestNonFiniteKernelAgreesWithPortable(t *testing.T) {
	if !cpu.AVX2FMA {
		t.Log("no AVX2: only the portable scan runs here")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	bad := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xffffffff)}
	for trial := range 3000 {
		n := rng.IntN(300)
		if trial%100 == 0 {
			n = 235146 // the MLP 784-256-128-10
		}
		x := make([]float32, n)
		for i := range x {
			b := rng.Uint32()
			if b&0x7f800000 == 0x7f800000 {
				b ^= 1 << 23 // keep it finite
			}
			x[i] = math.Float32frombits(b)
		}
		want := -1
		if n > 0 && trial%4 != 0 { // a quarter stay finite
			var pos int
			switch rng.IntN(4) {
			case 0:
				pos = n - 1
			case 1:
				pos = min(n-1, 32*rng.IntN(n/32+1)+rng.IntN(3)-1) // around a block edge
			default:
				pos = rng.IntN(n)
			}
			pos = max(pos, 0)
			x[pos] = bad[rng.IntN(len(bad))]
			if later := pos + rng.IntN(n-pos); rng.IntN(2) == 0 {
				x[later] = bad[rng.IntN(len(bad))] // a later one must not win
			}
			want = pos
		}
		if p, vecBad := anyNonFinitePrefix(x); p > n || p%32 != 0 || vecBad != anyNonFiniteScalar(x[:p]) {
			t.Fatalf("n=%d: the kernel says %v over %d elements, the portable scan %v", n, vecBad, p, anyNonFiniteScalar(x[:p]))
		}
		if anyNonFinite(x) != anyNonFiniteScalar(x) {
			t.Fatalf("n=%d: the kernel and the portable scan disagree", n)
		}
		if ok, i := AllFinite(x); ok != (want < 0) || i != want {
			t.Fatalf("n=%d: AllFinite = %v, %d; the first bad element is at %d", n, ok, i, want)
		}
	}
}

func BenchmarkAllFinite(b *testing.B) {
	x := make([]float32, 235146) // the MLP 784-256-128-10
	b.SetBytes(int64(4 * len(x)))
	for range b.N {
		AllFinite(x)
	}
}

// TestAddToMatchesScalar: the vector paths of AddTo and AddConst give the
// scalar sums bit for bit at every length around their 16-float blocks, and
// never touch dst beyond x.
func TestAddToMatchesScalar(t *testing.T) {
	for n := 0; n <= 70; n++ {
		x, dst := make([]float32, n), make([]float32, n+1)
		for i := range x {
			x[i] = float32(i)*0.37 - 5
			dst[i] = float32(i*i) * 0.011
		}
		dst[n] = 42
		want, shifted := make([]float32, n), make([]float32, n+1)
		shifted[n] = 42
		for i := range want {
			want[i] = dst[i] + x[i]
		}
		AddConst(shifted[:n], x, -0.7)
		for i := range x {
			if w := x[i] + -0.7; math.Float32bits(shifted[i]) != math.Float32bits(w) {
				t.Fatalf("n %d: AddConst gives %v at %d, want %v", n, shifted[i], i, w)
			}
		}
		if shifted[n] != 42 {
			t.Fatalf("n %d: AddConst wrote past the end", n)
		}
		AddTo(dst[:n], x)
		for i := range want {
			if math.Float32bits(dst[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n %d: dst[%d] = %v, want %v", n, i, dst[i], want[i])
			}
		}
		if dst[n] != 42 {
			t.Fatalf("n %d: wrote past the end", n)
		}
	}
}

// TestReLUMatchesScalar: the vector ReLU and its gradient give the scalar
// formulas' bits at every length 0–70, on values that include ±0, ±Inf,
// subnormals and NaNs of both signs, and write nothing past the end.
func TestReLUMatchesScalar(t *testing.T) {
	special := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x00000001, 0x80000001,
		0x7fc00000, 0xffc00000, 0x3f800000, 0xbf800000}
	for n := 0; n <= 70; n++ {
		x, dy := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = math.Float32frombits(special[(i*7)%len(special)])
			if i%3 == 0 {
				x[i] = float32(i)*0.37 - 9
			}
			dy[i] = float32(i) - 33.5
		}
		y, dx := make([]float32, n+1), make([]float32, n+1)
		y[n], dx[n] = 42, 42
		ReLU(y[:n], x)
		for i, v := range x {
			b := math.Float32bits(v)
			if want := b &^ uint32(int32(b)>>31); math.Float32bits(y[i]) != want {
				t.Fatalf("n %d: ReLU(%v) = %#x, want %#x", n, v, math.Float32bits(y[i]), want)
			}
		}
		ReLUGrad(dx[:n], dy, y[:n])
		for i := range dy {
			want := dy[i]
			if math.Float32bits(y[i]) == 0 {
				want = 0
			}
			if math.Float32bits(dx[i]) != math.Float32bits(want) {
				t.Fatalf("n %d: grad %d = %v, want %v (y %v)", n, i, dx[i], want, y[i])
			}
		}
		if y[n] != 42 || dx[n] != 42 {
			t.Fatalf("n %d: wrote past the end", n)
		}
	}
}

// TestWidenMatchesScalar: WidenScale, WidenAxpy and Narrow give the scalar
// formulas' bits at every length 0–70 on values that include ±0, ±Inf,
// subnormals, NaNs with payloads of both signs, float32 overflow and
// halfway cases of the narrowing, and write nothing past the end.
func TestWidenMatchesScalar(t *testing.T) {
	special := []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x00000001, 0x80000001,
		0x7fc00123, 0xffc00456, 0x7f7fffff, 0x3f800001}
	for n := 0; n <= 70; n++ {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i] = math.Float32frombits(special[(i*7)%len(special)])
			y[i] = math.Float32frombits(special[(i*3+1)%len(special)])
			if i%3 == 0 {
				x[i] = float32(i)*0.37 - 9
			}
			if i%4 == 1 {
				y[i] = float32(i)*1e-3 + 1
			}
			if i%10 == 9 { // both NaN: which payload survives the sum
				x[i], y[i] = math.Float32frombits(0x7fc00123), math.Float32frombits(0xffc00456)
			}
		}
		const a, b = 0.3, 1e30 // b·MaxFloat32 overflows float32 when narrowed
		acc := make([]float64, n+1)
		acc[n] = 42
		want := make([]float64, n)
		WidenScale(acc[:n], a, x)
		for i, v := range x {
			want[i] = a * float64(v)
		}
		WidenAxpy(acc[:n], b, y)
		for i, v := range y {
			want[i] += b * float64(v)
		}
		for i := range want {
			if math.Float64bits(acc[i]) != math.Float64bits(want[i]) {
				t.Fatalf("n %d: acc[%d] = %#x, want %#x", n, i, math.Float64bits(acc[i]), math.Float64bits(want[i]))
			}
		}
		// Halfway cases: 1 + 2⁻²⁴ (ties to 1) and 1 + 3·2⁻²⁴ (ties up).
		for i := range want {
			switch i % 5 {
			case 2:
				acc[i] = 1 + math.Ldexp(1, -24)
			case 4:
				acc[i] = -(1 + 3*math.Ldexp(1, -24))
			}
		}
		dst := make([]float32, n+1)
		dst[n] = 42
		Narrow(dst[:n], acc[:n])
		for i := range want {
			if w := float32(acc[i]); math.Float32bits(dst[i]) != math.Float32bits(w) {
				t.Fatalf("n %d: Narrow(%v) = %#x, want %#x", n, acc[i], math.Float32bits(dst[i]), math.Float32bits(w))
			}
		}
		if acc[n] != 42 || dst[n] != 42 {
			t.Fatalf("n %d: wrote past the end", n)
		}
	}
}
