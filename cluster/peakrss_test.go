package cluster

import "testing"

// peakRSSLine on hand values: the median of an even count is the mean of
// the middle two; a platform that said nothing gives no line.
func TestPeakRSSLine(t *testing.T) {
	const mib = 1 << 20
	got := peakRSSLine([]int64{40 * mib, 10 * mib, 30 * mib, 20 * mib}, 5*mib)
	want := "peak RSS of the 4 node processes: min 10.0, median 25.0, max 40.0 MiB, sum 0.10 GiB; the monitor 5.0 MiB (peak_rss.json in cluster)"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got := peakRSSLine([]int64{0, 0}, 0); got != "" {
		t.Errorf("unknown peaks give %q", got)
	}
	if got := peakRSSLine([]int64{3 * mib, 1 * mib, 2 * mib}, 0); got != "peak RSS of the 3 node processes: min 1.0, median 2.0, max 3.0 MiB, sum 0.01 GiB; the monitor 0.0 MiB (peak_rss.json in cluster)" {
		t.Errorf("odd count: %s", got)
	}
}
