package dashboard

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// withProbe serves h, with a script added to the page that records, once
// the page has rendered, how far the page is wider than the window
// (body's data-overflow, in pixels).
func withProbe(h http.Handler) http.Handler {
	probe := []byte(`<script>setTimeout(function () { var d = document.documentElement; document.body.setAttribute("data-overflow", String(d.scrollWidth - d.clientWidth)); }, 3000);</script></body>`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		_, _ = w.Write(bytes.Replace(rec.Body.Bytes(), []byte("</body>"), probe, 1))
	})
}

// The byzantine-sweep preset's 27 runs (3 rules × 3 fractions × 3 seeds)
// in trellis serve: the comparison draws 9 series — one per rule and
// fraction, the mean over seeds with its band — each with its key at its
// line's end and in the table under the plot (no legend cut short), every
// run listed with its series, and the page no wider than the window.
func TestBrowserSweepComparison(t *testing.T) {
	bin := chromium(t)
	s := New("byzantine-sweep")
	for _, frac := range []string{"0", "0.2", "0.4"} {
		for _, rule := range []string{"mean", "median", "trimmed_mean"} {
			for seed := uint64(1); seed <= 3; seed++ {
				run := s.AddRun(RunInfo{Label: rule + "(f=2)", Seed: seed, Nodes: 6, Rounds: 4, Strategy: "robust", Accuracy: "honest_global_acc", Global: true,
					Dir:    fmt.Sprintf("adversary.fraction=%s/strategy.rule=%s/seed-%d", frac, rule, seed),
					Params: map[string]string{"adversary.fraction": frac, "strategy.rule": rule}, Status: Finished})
				sink := s.Sink(run)
				for r := range 4 {
					_ = sink.Round(fakeRound(r, 6))
				}
				s.Update(run, func(i *RunInfo) { i.Status = Finished })
			}
		}
	}
	s.End("read from disk")
	ts := httptest.NewServer(withProbe(s.Handler()))
	defer ts.Close()
	defer s.Close()
	dom := dumpDOM(t, bin, ts.URL+"/", "--window-size=1280,900")
	noErrors(t, dom)
	cmp := regexp.MustCompile(`(?s)<div id="compare"[^>]*>(.*?)</div>`).FindStringSubmatch(dom)
	if cmp == nil {
		t.Fatal("no comparison plot")
	}
	if c := strings.Count(cmp[1], `class="curve"`); c != 9 {
		t.Errorf("the comparison draws %d curves, want 9 (one per rule and fraction)", c)
	}
	if c := strings.Count(cmp[1], `class="band"`); c != 9 {
		t.Errorf("the comparison draws %d bands over seeds, want 9", c)
	}
	if strings.Contains(cmp[1], `class="legend"`) || strings.Contains(cmp[1], "…") {
		t.Error("the comparison has a legend (its labels belong in the table under it)")
	}
	for k := 1; k <= 9; k++ {
		if !strings.Contains(cmp[1], fmt.Sprintf(`data-key="%d"`, k)) {
			t.Errorf("series %d has no key at its line's end", k)
		}
	}
	styles := map[string]bool{}
	for _, m := range regexp.MustCompile(`class="curve" data-name="\d+" data-points="4" stroke="([^"]+)"(?: stroke-dasharray="([^"]+)")?`).FindAllStringSubmatch(cmp[1], -1) {
		styles[m[1]+"/"+m[2]] = true
	}
	if len(styles) != 9 {
		t.Errorf("%d distinct colour and dash pairs among the 9 series, want 9: %v", len(styles), styles)
	}
	if c := count(dom, `<tr data-series="\d+"`); c != 9 {
		t.Errorf("the key table under the plot has %d rows, want 9", c)
	}
	if !strings.Contains(dom, `<tr data-series="5"><td class="l key">`) || !regexp.MustCompile(`<tr data-series="5">.*?median\(<wbr>f=2\).*?0\.2.*?1, 2, 3.*?#12, #13, #14`).MatchString(dom) {
		t.Error("series 5 is not median at fraction 0.2 over seeds 1–3, runs 12–14, in the key table")
	}
	if c := count(dom, `<tr data-run="\d+"`); c != 27 {
		t.Errorf("the runs table lists %d runs, want 27", c)
	}
	if over := attr(t, dom, `data-overflow="(-?\d+)"`); over != "0" {
		t.Errorf("the page is %s px wider than a 1280 px window: the runs table does not fit", over)
	}
}
