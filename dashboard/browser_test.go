package dashboard

import (
	"bufio"
	"bytes"
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/report"
)

// chromium returns the headless browser's path, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("dashboard: starts headless Chromium several times")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("dashboard: chromium not found; apt-get install -y chromium (Debian) to run the dashboard's browser tests")
	return ""
}

// endingStreams ends every event stream a second after it opened: a
// headless Chromium dumps the DOM only once no request is pending. The
// page's EventSource then reconnects (with Last-Event-ID), and is told
// 204 No Content, which ends it for good (resuming is tested in Go).
func endingStreams(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/events" && r.Header.Get("Last-Event-ID") != "" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if r.URL.Path == "/api/events" {
			ctx, cancel := context.WithTimeout(r.Context(), time.Second)
			defer cancel()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	})
}

// dumpDOM loads url in headless Chromium, lets its script run, and
// returns the DOM it built. Chromium is stopped once the document is out
// (a live page keeps its event stream open).
func dumpDOM(t *testing.T, bin, url string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute) // a hang check, not a timing claim
	defer cancel()
	// The profile directory is not t.TempDir: Chromium's helper processes
	// may still write to it for a moment after the browser is killed,
	// which would fail TempDir's cleanup. It is removed best-effort.
	profile, err := os.MkdirTemp("", "trellis-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--no-first-run", "--no-default-browser-check", "--user-data-dir=" + profile, "--virtual-time-budget=10000",
		"--enable-logging=stderr", "--v=0"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "--dump-dom", url)...)
	// Its own process group, so that killing it stops its helpers too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var dom strings.Builder
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		dom.WriteString(sc.Text())
		dom.WriteByte('\n')
		if strings.Contains(sc.Text(), "</html>") {
			break
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	_ = cmd.Wait()
	b, _ := os.ReadFile(stderr.Name())
	if !strings.Contains(dom.String(), "</html>") {
		t.Fatalf("chromium gave no document for %s; its stderr:\n%s", url, b)
	}
	// Every console message (an error, a warning, a log line) is a
	// failure: the page writes none.
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Contains(line, ":CONSOLE") {
			t.Errorf("console message on %s: %s", url, line)
		}
	}
	return dom.String()
}

// noErrors fails when the page caught a script error (window.onerror and
// the render loop write them into #errors).
func noErrors(t *testing.T, dom string) {
	t.Helper()
	m := regexp.MustCompile(`(?s)<pre id="errors"([^>]*)>(.*?)</pre>`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("no #errors element in the page")
	}
	if !strings.Contains(m[1], "hidden") || strings.TrimSpace(m[2]) != "" {
		t.Fatalf("the page reported errors: %s", m[2])
	}
	if !strings.Contains(dom, "data-rendered=") {
		t.Fatal("the page never rendered")
	}
}

func count(dom, re string) int { return len(regexp.MustCompile(re).FindAllStringIndex(dom, -1)) }

func attr(t *testing.T, dom, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the page has no %s", re)
	}
	return m[1]
}

// The page of a running simulation: it renders with no script error and
// no console message,
// its accuracy curve gains points as rounds arrive, the graph shows the
// round's nodes and edges, and the slider goes back a round.
func TestBrowserLivePage(t *testing.T) {
	bin := chromium(t)
	s := New("live test")
	run := s.AddRun(RunInfo{Label: "fedavg", Nodes: 6, Rounds: 10, Strategy: "fedavg"})
	ts := httptest.NewServer(endingStreams(s.Handler()))
	defer ts.Close()
	defer s.Close()
	sink := s.Sink(run)
	for r := range 3 {
		_ = sink.Round(fakeRound(r, 6))
	}
	dom := dumpDOM(t, bin, ts.URL+"/")
	noErrors(t, dom)
	if got := attr(t, dom, `data-name="local \(mean\)" data-points="(\d+)"`); got != "3" {
		t.Fatalf("accuracy curve after 3 rounds: %s points", got)
	}
	if n, e := attr(t, dom, `data-nodes="(\d+)"`), attr(t, dom, `data-edges="(\d+)"`); n != "6" || e != "12" {
		t.Fatalf("graph: %s nodes, %s edges; want 6, 12", n, e)
	}
	if c := strings.Count(dom, `class="node byz"`); c != 2 {
		t.Fatalf("%d Byzantine nodes drawn, want 2", c)
	}
	if !strings.Contains(dom, `data-name="cosine: byzantine" data-points="3"`) || !strings.Contains(dom, `<figure id="f-scores">`) {
		t.Fatal("no agreement-score chart")
	}
	if c := count(dom, `<tr data-node="\d+"`); c != 6 {
		t.Fatalf("node table: %d rows", c)
	}
	for r := 3; r < 6; r++ {
		_ = sink.Round(fakeRound(r, 6))
	}
	dom = dumpDOM(t, bin, ts.URL+"/")
	noErrors(t, dom)
	if got := attr(t, dom, `data-name="local \(mean\)" data-points="(\d+)"`); got != "6" {
		t.Fatalf("accuracy curve after 6 rounds: %s points", got)
	}
	if got := attr(t, dom, `<svg[^>]*data-round="(\d+)"`); got != "5" {
		t.Fatalf("graph follows round %s, want the latest, 5", got)
	}
	// The slider moved back to round 4.
	dom = dumpDOM(t, bin, ts.URL+"/#round=4")
	noErrors(t, dom)
	if got := attr(t, dom, `<svg[^>]*data-round="(\d+)"`); got != "4" {
		t.Fatalf("after the slider went back: graph of round %s, want 4", got)
	}
	if !strings.Contains(dom, `round-out">4 of 0–5 (6 of 10 rounds run so far)`) {
		t.Fatalf("the round label does not say 4 of the rounds on hand: %s", attr(t, dom, `id="round-out"[^>]*>([^<]*)<`))
	}
	if got := attr(t, dom, `<input id="slider"[^>]*max="(\d+)"`); got != "5" {
		t.Errorf("the slider ends at round %s, want the last on hand, 5", got)
	}
	// The run ends: the page says so instead of "disconnected …
	// reconnecting", and its stream stops.
	s.Update(run, func(i *RunInfo) { i.Status = Finished })
	s.End("")
	dom = dumpDOM(t, bin, ts.URL+"/")
	noErrors(t, dom)
	if got := attr(t, dom, `<span id="conn" class="([^"]*)">`) + ": " + attr(t, dom, `id="conn"[^>]*>([^<]*)<`); got != "conn done: finished" {
		t.Errorf("the live page of a finished run says %q, want finished", got)
	}
}

// A finished sweep lists all its runs; its report.html opens from a file
// with no server and no script error.
func TestBrowserSweepAndReport(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	c := tinyConfig(t, 2)
	for _, seed := range []uint64{1, 2, 3} {
		c.Seed = seed
		// Three runs, written by the real run-directory writer.
		d := filepath.Join(dir, "seed-"+string(rune('0'+seed)))
		if _, err := runTiny(t, c, d); err != nil {
			t.Fatal(err)
		}
	}
	s := New("sweep")
	if n, err := s.LoadDirs(dir); err != nil || n != 3 {
		t.Fatalf("LoadDirs: %d %v", n, err)
	}
	s.End("read from disk") // as trellis serve does
	ts := httptest.NewServer(endingStreams(s.Handler()))
	defer ts.Close()
	defer s.Close()
	dom := dumpDOM(t, bin, ts.URL+"/")
	noErrors(t, dom)
	if c := count(dom, `<tr data-run="\d+"`); c != 3 {
		t.Fatalf("the sweep table lists %d runs, want 3", c)
	}
	if c := strings.Count(dom, `class="l status-finished"`); c != 3 {
		t.Fatalf("%d runs shown finished, want 3", c)
	}
	if got := attr(t, dom, `id="conn"[^>]*>([^<]*)<`); got != "finished (all 3 runs) · read from disk" {
		t.Errorf("trellis serve's badge says %q, want finished", got)
	}
	if !regexp.MustCompile(`id="compare"[^>]*><svg`).MatchString(dom) || strings.Count(dom, `class="curve"`) < 3 {
		t.Fatal("no comparison plot")
	}
	p, err := WriteReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	dom = dumpDOM(t, bin, "file://"+p)
	noErrors(t, dom)
	if c := count(dom, `<tr data-run="\d+"`); c != 3 {
		t.Fatalf("report.html lists %d runs, want 3", c)
	}
	if !strings.Contains(dom, "data inline") {
		t.Fatal("report.html did not read its inline data")
	}
	// The labels are the report's (report.Label), the convention stated,
	// and a finished run's graph has its weights from edges.jsonl.
	for _, want := range []string{report.Label("final_honest_global_acc"), report.Label("round"), report.Label("local_acc"),
		"accuracies are fractions, rounds count from 0"} {
		if !strings.Contains(dom, html.EscapeString(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if strings.Contains(dom, ">final_honest") {
		t.Error("report.html shows a raw metric name")
	}
	if note := attr(t, dom, `id="graph-note"[^>]*>([^<]*)<`); !strings.Contains(note, "12 edges") || strings.Contains(note, "no weights") {
		t.Errorf("report.html's graph: %q, want the round's 12 edges with their weights", note)
	}
}

// Every label the page asks for by name is in the report's table.
func TestPageLabelsAreInTheTable(t *testing.T) {
	js, err := assets.ReadFile("assets/app.js")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`label\("([a-z_]+)"\)|"(final_[a-z_]+)"`).FindAllStringSubmatch(string(js), -1)
	if len(names) < 8 {
		t.Fatalf("only %d labels found in app.js", len(names))
	}
	for _, m := range names {
		name := m[1] + m[2]
		if _, ok := report.Describe(name); !ok {
			t.Errorf("app.js asks for the label of %q, which the table lacks", name)
		}
	}
	page := pageHTML([]byte(`<script src="model.js"></script>
<script src="app.js"></script>`), "", false, nil)
	if !bytes.Contains(page, []byte(`"final_honest_global_acc":"final honest global accuracy (fraction)"`)) {
		t.Errorf("the served page does not carry the label table: %.300s", page)
	}
}
