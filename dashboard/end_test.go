package dashboard

import (
	"bufio"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Once the server has ended (End: the runs are over, or read from disk),
// a stream sends the events so far, the end last, and stops; a browser
// reconnecting after the end is told 204 No Content, which stops an
// EventSource; nothing is added after the end.
func TestEndStopsTheStreams(t *testing.T) {
	s := New("ended")
	s.AddRun(RunInfo{Label: "fedavg", Status: Finished})
	s.End("read from disk")
	s.AddRun(RunInfo{Label: "late"})
	ts := httptest.NewServer(s.Handler())
	defer ts.Close()
	defer s.Close()
	resp, err := http.Get(ts.URL + "/api/events")
	if err != nil {
		t.Fatal(err)
	}
	var data []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() { // ends when the server ends the stream
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			data = append(data, d)
		}
	}
	resp.Body.Close()
	if len(data) != 2 || !strings.Contains(data[0], `"label":"fedavg"`) || data[1] != `{"type":"end","note":"read from disk"}` {
		t.Fatalf("events %q, want the run then the end", data)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/events", nil)
	req.Header.Set("Last-Event-ID", "1")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Errorf("reconnecting after the end: %s, want 204 No Content", resp.Status)
	}
}

// A server listening on every interface gives a URL a browser can open
// (127.0.0.1, not [::]) and says that it listens on all interfaces.
func TestPageURLOfEveryInterface(t *testing.T) {
	l, _, err := Listen("0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	url, note := PageURL(l.Addr())
	_, port, _ := net.SplitHostPort(l.Addr().String())
	if url != "http://127.0.0.1:"+port+"/" || !strings.Contains(note, "all interfaces") {
		t.Fatalf("PageURL(%s) = %q, %q", l.Addr(), url, note)
	}
	s := New("url")
	go func() { _ = s.Serve(l) }()
	defer s.Close()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET %s: %s", url, resp.Status)
	}
	lo, _, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lo.Close()
	if url, note := PageURL(lo.Addr()); url != "http://"+lo.Addr().String()+"/" || note != "" {
		t.Errorf("PageURL(%s) = %q, %q", lo.Addr(), url, note)
	}
}
