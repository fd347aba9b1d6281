package dashboard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trellis-fl/trellis/metrics"
)

// fakeRound is a round of n nodes (the last third Byzantine) on a ring,
// with live weights.
func fakeRound(r, n int) *metrics.Round {
	rec := &metrics.Round{Round: r, Evaluated: true, Nodes: make([]metrics.NodeRound, n)}
	live := &metrics.Live{In: make([][]int, n), Weights: make([]map[int]float64, n), Rejections: make([]map[string]int, n)}
	for i := range n {
		byz := i >= n-n/3
		acc := 0.1 + 0.8*float64(r+1)/float64(r+2) - 0.01*float64(i)
		rec.Nodes[i] = metrics.NodeRound{Node: i, Byzantine: byz, Evaluated: true, LocalAcc: acc, GlobalAcc: acc - 0.05, LocalLoss: 1 / float64(r+1)}
		prev, next := (i+n-1)%n, (i+1)%n
		isByz := func(j int) bool { return j >= n-n/3 }
		for _, j := range []int{prev, next} {
			v := 0.9
			if isByz(j) {
				v = 0.2
			}
			rec.Nodes[i].Scores = append(rec.Nodes[i].Scores, metrics.Score{From: j, Byzantine: isByz(j), Kind: "cosine", Value: v})
		}
		live.In[i] = []int{prev, next}
		live.Weights[i] = map[int]float64{i: 0.5, prev: 0.25, next: 0.25}
		if i == 0 {
			live.Rejections[i] = map[string]int{"signature": 2}
			rec.Nodes[i].Rejected = 2
		}
	}
	rec.Live = live
	rec.Summarize()
	return rec
}

// testServer serves a Server with one run until the test ends.
func testServer(t *testing.T, info RunInfo) (*Server, int, *httptest.Server) {
	s := New("test")
	run := s.AddRun(info)
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	t.Cleanup(s.Close)
	return s, run, ts
}

// event is one Server-Sent Event as read by a client.
type event struct {
	id   int
	data map[string]any
}

// readEvents reads n events from an SSE body.
func readEvents(t *testing.T, body io.Reader, n int) []event {
	t.Helper()
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<24)
	var out []event
	cur := event{id: -1}
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id, _ = strconv.Atoi(line[4:])
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &cur.data); err != nil {
				t.Fatalf("event %d: %v", cur.id, err)
			}
		case line == "" && cur.data != nil:
			out = append(out, cur)
			cur = event{id: -1}
		}
	}
	if len(out) < n {
		t.Fatalf("read %d events, want %d (%v)", len(out), n, sc.Err())
	}
	return out
}

func get(t *testing.T, url string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// Records arrive in order, as they are added, with consecutive ids; a
// viewer that connects later gets the history from the start, and one
// that reconnects with Last-Event-ID resumes after it.
func TestStreamInOrderWithHistory(t *testing.T) {
	s, run, ts := testServer(t, RunInfo{Label: "fedavg", Nodes: 6, Rounds: 8})
	live := get(t, ts.URL+"/api/events", nil)
	if ct := live.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sink := s.Sink(run)
	for r := range 8 {
		if err := sink.Round(fakeRound(r, 6)); err != nil {
			t.Fatal(err)
		}
	}
	// run (pending), run (running), 8 rounds
	evs := readEvents(t, live.Body, 10)
	rounds := 0
	for k, e := range evs {
		if e.id != k {
			t.Fatalf("event %d has id %d", k, e.id)
		}
		if e.data["type"] == "round" {
			if got := int(e.data["round"].(float64)); got != rounds {
				t.Fatalf("event %d is round %d, want %d", k, got, rounds)
			}
			rounds++
		}
	}
	if rounds != 8 {
		t.Fatalf("%d rounds", rounds)
	}
	last := evs[9].data
	if edges := last["edges"].([]any); len(edges) != 12 {
		t.Fatalf("%d edges, want 12 (a ring of 6, both directions)", len(edges))
	}
	n0 := last["nodes"].([]any)[0].(map[string]any)
	if n0["kept"].(float64) != 2 || n0["reasons"].(map[string]any)["signature"].(float64) != 2 {
		t.Fatalf("node 0: %v", n0)
	}

	again := readEvents(t, get(t, ts.URL+"/api/events", nil).Body, 10)
	for k := range again {
		if again[k].id != k || fmt.Sprint(again[k].data) != fmt.Sprint(evs[k].data) {
			t.Fatalf("a late viewer's event %d differs", k)
		}
	}
	resumed := readEvents(t, get(t, ts.URL+"/api/events", map[string]string{"Last-Event-ID": "6"}).Body, 3)
	if resumed[0].id != 7 || resumed[2].id != 9 {
		t.Fatalf("resumed at ids %d..%d, want 7..9", resumed[0].id, resumed[2].id)
	}
}

// A viewer that never reads what it is sent stalls neither the records
// going in nor the other viewers, and the run's Every sink behind the
// same fan-out gets every record.
func TestABlockedViewerStallsNothing(t *testing.T) {
	s, run, ts := testServer(t, RunInfo{Label: "x", Nodes: 100, Rounds: 1000})
	// A client that asks for the stream and never reads a byte.
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4096)
	}
	fmt.Fprintf(c, "GET /api/events HTTP/1.1\r\nHost: x\r\n\r\n")

	const rounds = 1000 // 100-node frames of 14 kB: far past any socket buffer
	var got int
	out := metrics.NewFanout()
	out.Add(metrics.SinkFunc(func(*metrics.Round) error { got++; return nil }), metrics.Every, 0)
	out.Add(s.Sink(run), metrics.Latest, 0)
	done := make(chan error, 1)
	go func() {
		for r := range rounds {
			if err := out.Round(fakeRound(r, 100)); err != nil {
				done <- err
				return
			}
		}
		done <- out.Close()
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute): // a deadlock check, not a timing claim
		t.Fatal("records stall behind a viewer that does not read")
	}
	if got != rounds {
		t.Fatalf("the Every sink got %d records, want %d", got, rounds)
	}
	// Another viewer still gets the stream while the first one is stuck.
	first := readEvents(t, get(t, ts.URL+"/api/events", nil).Body, 2)
	if first[1].id != 1 {
		t.Fatalf("second viewer: %+v", first[1].id)
	}
	// Adding to the hub directly never waits either.
	for r := range 50 {
		if err := s.hub.add(newFrame(run, fakeRound(rounds+r, 100), nil)); err != nil {
			t.Fatal(err)
		}
	}
}

// The server serves its page and API and nothing else.
func TestOnlyItsOwnPageAndAPI(t *testing.T) {
	s := New("a <b> title")
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	defer s.Close()
	for path, want := range map[string]int{
		"/": 200, "/index.html": 200, "/app.js": 200, "/app.css": 200, "/api/events.json": 200,
		"/assets/app.js": 404, "/api": 404, "/api/": 404, "/favicon.ico": 404, "/doc.go": 404,
		"/../server.go": 404, "/..%2fserver.go": 404, "/%2e%2e/%2e%2e/etc/passwd": 404, "/app.js/../../go.mod": 404,
		"//etc/passwd": 404, "/app.js%00": 404,
	} {
		// A raw request: the client would clean the path.
		c, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if resp.StatusCode != want && !(want == 404 && resp.StatusCode == 400) {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
		if bytes.Contains(body, []byte("package dashboard")) || bytes.Contains(body, []byte("root:")) || bytes.Contains(body, []byte("module github.com")) {
			t.Errorf("GET %s served a file of the machine", path)
		}
	}
	page := get(t, ts.URL+"/", nil)
	b, _ := io.ReadAll(page.Body)
	if !bytes.Contains(b, []byte("a &lt;b&gt; title")) || bytes.Contains(b, []byte("<b>")) {
		t.Errorf("the title is not escaped")
	}
	req, _ := http.NewRequest(http.MethodPost, ts.URL+"/", strings.NewReader("x"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
}

// Listen binds only the address given: no host is refused, a loopback
// host is bound quietly, any other with a warning that it exposes the run.
func TestListen(t *testing.T) {
	if _, _, err := Listen(":0"); err == nil || !strings.Contains(err.Error(), "every interface") {
		t.Fatalf(":0: %v", err)
	}
	if _, _, err := Listen("nonsense"); err == nil {
		t.Fatal("nonsense: no error")
	}
	l, warn, err := Listen("127.0.0.1:0")
	if err != nil || warn != "" {
		t.Fatalf("127.0.0.1:0: %v %q", err, warn)
	}
	if !l.Addr().(*net.TCPAddr).IP.IsLoopback() {
		t.Fatalf("bound %v", l.Addr())
	}
	l.Close()
	l, warn, err = Listen("0.0.0.0:0")
	if err != nil {
		t.Skipf("cannot bind 0.0.0.0 here: %v", err)
	}
	l.Close()
	if !strings.Contains(warn, "reachable from the network") {
		t.Fatalf("0.0.0.0: warning %q", warn)
	}
}

// Non-finite numbers (a diverged model) are sent as null, not dropped
// with the whole frame.
func TestNonFiniteNumbers(t *testing.T) {
	r := fakeRound(0, 3)
	r.Nodes[1].LocalAcc = 0
	r.Nodes[1].LocalLoss = posInf()
	r.Live.Weights[2][1] = nan()
	b, err := json.Marshal(newFrame(0, r, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"loss":null`)) {
		t.Fatalf("%s", b)
	}
}

func posInf() float64 { return 1 / zero() }
func nan() float64    { return zero() / zero() }
func zero() float64   { return 0 }
