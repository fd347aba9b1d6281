package cpu

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestFlagsAreConsistent(t *testing.T) {
	if AVX512 && !AVX2FMA {
		t.Error("AVX-512 reported without AVX2 and FMA")
	}
	t.Logf("AVX2+FMA: %v, AVX-512: %v, level %s", AVX2FMA, AVX512, Level())
}

func TestCapped(t *testing.T) {
	for _, tc := range []struct {
		v                 string
		avx2, avx512      bool
		wantAVX2, want512 bool
		wantErr           bool
	}{
		{"", true, true, true, true, false},
		{"auto", true, true, true, true, false},
		{"avx2", true, true, true, false, false},
		{"portable", true, true, false, false, false},
		{"avx2", false, false, false, false, false}, // cannot turn on what is missing
		{"avx512", true, false, true, false, true},  // not a cap: refused, flags kept
		{"AVX2", true, true, true, true, true},
	} {
		a, b, err := capped(tc.v, tc.avx2, tc.avx512)
		if a != tc.wantAVX2 || b != tc.want512 || (err != nil) != tc.wantErr {
			t.Errorf("capped(%q, %v, %v) = %v, %v, %v; want %v, %v, error %v", tc.v, tc.avx2, tc.avx512, a, b, err, tc.wantAVX2, tc.want512, tc.wantErr)
		}
	}
}

// TestEnvCapsInit runs this test binary again with TRELLIS_CPU set: the
// flags read at init must obey it, and a bad value is reported on stderr.
func TestEnvCapsInit(t *testing.T) {
	if os.Getenv("TRELLIS_CPU_CHILD") != "" {
		os.Stdout.WriteString("level=" + Level() + "\n")
		return
	}
	run := func(v string) (string, string) {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestEnvCapsInit$")
		cmd.Env = append(os.Environ(), "TRELLIS_CPU_CHILD=1", EnvVar+"="+v)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s=%s: %v\n%s", EnvVar, v, err, errb.String())
		}
		return out.String(), errb.String()
	}
	if out, _ := run("portable"); !strings.Contains(out, "level=portable") {
		t.Errorf("%s=portable: %q", EnvVar, out)
	}
	want := "level=portable"
	if a, _ := features(); a {
		want = "level=avx2"
	}
	if out, _ := run("avx2"); !strings.Contains(out, want) {
		t.Errorf("%s=avx2: %q, want %s", EnvVar, out, want)
	}
	detected := "portable" // what the CPU has, whatever this process's own TRELLIS_CPU
	if a, b := features(); b {
		detected = "avx512"
	} else if a {
		detected = "avx2"
	}
	if out, errOut := run("sse9"); !strings.Contains(out, "level="+detected) || !strings.Contains(errOut, `TRELLIS_CPU="sse9"`) {
		t.Errorf("%s=sse9: stdout %q, stderr %q; want the detected level and a complaint", EnvVar, out, errOut)
	}
}
