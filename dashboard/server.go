package dashboard

import (
	"bufio"
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/trellis-fl/trellis/metrics"
	"github.com/trellis-fl/trellis/rundir"
)

//go:embed assets/index.html assets/model.js assets/app.js assets/app.css
var assets embed.FS

// Status of a run on the page.
const (
	Pending     = "pending"
	Running     = "running"
	Finished    = "finished"
	Failed      = "failed"
	Interrupted = "interrupted" // rounds on file, no summary
)

// RunInfo describes one run of the page; a new RunInfo of the same Run
// replaces the previous one (its status changed).
type RunInfo struct {
	Type     string            `json:"type"` // "run"
	Run      int               `json:"run"`
	Dir      string            `json:"dir"`
	Label    string            `json:"label"`
	Params   map[string]string `json:"params,omitempty"`
	Seed     uint64            `json:"seed"`
	Nodes    int               `json:"nodes"`
	Rounds   int               `json:"rounds"`
	Strategy string            `json:"strategy"`
	// Accuracy is the accuracy the sweep's comparison plot draws for the
	// run (report.AccuracyCurve): honest_local_acc or honest_global_acc.
	Accuracy string `json:"accuracy"`
	// Global says whether the run measures global accuracy
	// (evaluation.global_test ≠ 0); the page shows – where it does not.
	Global bool `json:"global"`
	// Async is an asynchronous run's virtual clock (its manifest's): its
	// rounds are windows of Async.Window virtual seconds.
	Async  *rundir.AsyncClock `json:"async,omitempty"`
	Status string             `json:"status"`
	Error  string             `json:"error,omitempty"`
	// Final is the run's summary.csv row (final metrics), when finished.
	Final map[string]num `json:"final,omitempty"`
	// Config is the resolved config (TOML) and Manifest the manifest
	// (JSON), when on file.
	Config   string `json:"config,omitempty"`
	Manifest string `json:"manifest,omitempty"`
	// Command re-runs the run.
	Command string `json:"command,omitempty"`
}

// Server holds the page's events and serves the page. Its methods are
// safe for concurrent use.
type Server struct {
	hub  *hub
	mu   sync.Mutex
	runs []RunInfo
	// warnings are what LoadDirs found wrong in the run directories.
	warnings []string
	done     chan struct{}
	once     sync.Once
	endOnce  sync.Once
	// WriteTimeout bounds one write to a viewer; a viewer that takes
	// longer is dropped (its browser reconnects and resumes).
	WriteTimeout time.Duration
	// Heartbeat is how often an idle stream gets a comment line.
	Heartbeat time.Duration
	// Title is the page's title.
	Title string
}

// New returns a server with no runs.
func New(title string) *Server {
	return &Server{hub: newHub(), done: make(chan struct{}), WriteTimeout: 30 * time.Second, Heartbeat: 15 * time.Second, Title: title}
}

// AddRun adds a run to the page and returns its number.
func (s *Server) AddRun(info RunInfo) int {
	s.mu.Lock()
	info.Type, info.Run = "run", len(s.runs)
	if info.Status == "" {
		info.Status = Pending
	}
	s.runs = append(s.runs, info)
	s.mu.Unlock()
	_ = s.hub.add(info)
	return info.Run
}

// Update changes a run's description (its status, final metrics).
func (s *Server) Update(run int, f func(*RunInfo)) {
	s.mu.Lock()
	if run < 0 || run >= len(s.runs) {
		s.mu.Unlock()
		return
	}
	f(&s.runs[run])
	s.runs[run].Type, s.runs[run].Run = "run", run
	info := s.runs[run]
	s.mu.Unlock()
	_ = s.hub.add(info)
}

// Run returns a run's description.
func (s *Server) Run(run int) (RunInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if run < 0 || run >= len(s.runs) {
		return RunInfo{}, false
	}
	return s.runs[run], true
}

// Warnings lists the damaged run directories LoadDirs found, one
// message each (the file and the line).
func (s *Server) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.warnings)
}

// Sink returns the sink of a live run: add it to the run's metrics.Fanout
// as a metrics.Latest sink. The first record marks the run running. An
// asynchronous run's is also an experiment.StepSink, for the steps axis
// and the staleness of its windows (asyncLive).
func (s *Server) Sink(run int) metrics.Sink {
	var async *asyncLive
	if info, ok := s.Run(run); ok && info.Async != nil {
		async = &asyncLive{frames: newAsyncFrames(info.Async.Window, info.Nodes, nil)}
	}
	started := false
	sink := metrics.SinkFunc(func(r *metrics.Round) error {
		if !started {
			started = true
			s.Update(run, func(i *RunInfo) { i.Status = Running })
		}
		f := newFrame(run, r, nil)
		if async != nil {
			async.annotate(f)
		}
		return s.hub.add(f)
	})
	if async == nil {
		return sink
	}
	return asyncLiveSink{sink, async}
}

// endEvent tells the page that no more events will come: it stops its
// stream instead of reconnecting, and says the runs are over.
type endEvent struct {
	Type string `json:"type"` // "end"
	// Note says why, shown after the runs' statuses ("read from disk").
	Note string `json:"note,omitempty"`
}

// End marks the page complete: the runs will not change (they finished,
// or they are read from disk), so every stream ends once it has sent the
// events so far, and a browser that reconnects afterwards is told 204 No
// Content, which stops it. Events added afterwards are dropped.
func (s *Server) End(note string) {
	s.endOnce.Do(func() { _ = s.hub.end(endEvent{Type: "end", Note: note}) })
}

// Close ends every open stream, after sending it the events so far (End's
// included); the server serves no more events.
func (s *Server) Close() {
	s.once.Do(func() { close(s.done) })
}

// Handler serves the page ("/", "/model.js", "/app.js", "/app.css"), the event stream
// ("/api/events", Server-Sent Events; Last-Event-ID or ?from=N resumes)
// and every event so far as one JSON array ("/api/events.json"). Any
// other path is 404, any method but GET and HEAD 405.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; img-src 'self' data:")
		switch r.URL.Path {
		case "/", "/index.html":
			s.asset(w, "assets/index.html", "text/html; charset=utf-8")
		case "/app.js":
			s.asset(w, "assets/app.js", "text/javascript; charset=utf-8")
		case "/model.js":
			s.asset(w, "assets/model.js", "text/javascript; charset=utf-8")
		case "/app.css":
			s.asset(w, "assets/app.css", "text/css; charset=utf-8")
		case "/api/events":
			s.stream(w, r)
		case "/api/events.json":
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(joinEvents(s.hub.all()))
		default:
			http.NotFound(w, r)
		}
	})
}

func (s *Server) asset(w http.ResponseWriter, name, typ string) {
	b, err := assets.ReadFile(name)
	if err != nil {
		http.Error(w, "missing asset", http.StatusInternalServerError)
		return
	}
	if name == "assets/index.html" {
		b = pageHTML(b, s.Title, false, nil)
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(b)
}

// joinEvents is the events as one JSON array.
func joinEvents(evs [][]byte) []byte {
	n := 2
	for _, e := range evs {
		n += len(e) + 2
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for k, e := range evs {
		if k > 0 {
			out = append(out, ',', '\n')
		}
		out = append(out, e...)
	}
	return append(out, ']')
}

// maxBurst is the most events written between two write deadlines.
const maxBurst = 256

// stream writes the events to one viewer as Server-Sent Events, from
// where it resumes, until it goes away, it has sent the end (End) or the
// events so far when the server closes, or a write takes longer than
// WriteTimeout. It runs on the viewer's own goroutine:
// nothing else waits for it.
func (s *Server) stream(w http.ResponseWriter, r *http.Request) {
	from := 0
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		if n, err := strconv.Atoi(id); err == nil && n >= 0 {
			from = n + 1
		}
	} else if q := r.URL.Query().Get("from"); q != "" {
		if n, err := strconv.Atoi(q); err == nil && n >= 0 {
			from = n
		}
	}
	if evs, _, ended := s.hub.sinceEnd(from); ended && len(evs) == 0 {
		// Past the end: 204 stops an EventSource for good.
		w.WriteHeader(http.StatusNoContent)
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	send := func(write func() error) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(s.WriteTimeout))
		if err := write(); err != nil {
			return false
		}
		if err := bw.Flush(); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(func() error { _, err := bw.WriteString("retry: 2000\n\n"); return err }) {
		return
	}
	beat := time.NewTicker(s.Heartbeat)
	defer beat.Stop()
	closing := false
	for {
		evs, wake, ended := s.hub.sinceEnd(from)
		if len(evs) == 0 && (ended || closing) {
			return // everything sent: the last event the end, or the server closing
		}
		if len(evs) > 0 {
			evs = evs[:min(len(evs), maxBurst)]
			ok := send(func() error {
				for k, e := range evs {
					if _, err := fmt.Fprintf(bw, "id: %d\ndata: %s\n\n", from+k, e); err != nil {
						return err
					}
				}
				return nil
			})
			if !ok {
				return
			}
			from += len(evs)
			continue
		}
		select {
		case <-wake:
		case <-beat.C:
			if !send(func() error { _, err := bw.WriteString(": ping\n\n"); return err }) {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.done:
			closing = true // send what is left (the end), then stop
		}
	}
}

// Listen binds addr (host:port). A non-loopback host is bound only when
// given explicitly, and the returned warning says that it exposes the
// run; an address without a host (":8080", all interfaces) is refused.
func Listen(addr string) (net.Listener, string, error) {
	if err := CheckAddr(addr); err != nil {
		return nil, "", err
	}
	host, _, _ := net.SplitHostPort(addr)
	warning := ""
	if !loopback(host) {
		warning = fmt.Sprintf("the dashboard on %s is reachable from the network: anyone who can reach it sees the run (its config, metrics and who is Byzantine)", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	return l, warning, nil
}

// PageURL is the address to open the page of a server listening on a:
// for an unspecified address (0.0.0.0, ::: every interface), which is no
// address to browse to, 127.0.0.1 on this machine, with a note that says
// so and gives the host's name for other machines.
func PageURL(a net.Addr) (url, note string) {
	tcp, ok := a.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return "http://" + a.String() + "/", ""
	}
	port := strconv.Itoa(tcp.Port)
	note = "listening on all interfaces"
	if host, err := os.Hostname(); err == nil && host != "" {
		note += "; from another machine: http://" + net.JoinHostPort(host, port) + "/"
	}
	return "http://" + net.JoinHostPort("127.0.0.1", port) + "/", note
}

// CheckAddr checks a dashboard address as Listen does, without binding
// it: HOST:PORT, with a host (an address without one would listen on
// every interface).
func CheckAddr(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("dashboard address %q: want HOST:PORT, e.g. 127.0.0.1:8080", addr)
	}
	if host == "" {
		return errors.New("dashboard address " + strconv.Quote(addr) + " has no host and would listen on every interface: give 127.0.0.1" + addr + " (this machine only), or 0.0.0.0" + addr + " to expose the run to the network")
	}
	return nil
}

// loopback reports whether every address host names is a loopback one.
func loopback(host string) bool {
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	ips, err := net.LookupIP(host)
	if err != nil || len(ips) == 0 {
		return false
	}
	for _, ip := range ips {
		if !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// Serve serves the page on l until Close; it returns when l is closed
// and the open streams have sent their last events (the end), or after
// shutdownGrace.
func (s *Server) Serve(l net.Listener) error {
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	shut := make(chan struct{})
	go func() {
		defer close(shut)
		<-s.done
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if hs.Shutdown(ctx) != nil {
			_ = hs.Close()
		}
	}()
	err := hs.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		<-shut
		return nil
	}
	return err
}

// shutdownGrace bounds how long Serve waits, once closed, for the open
// streams to send their last events.
const shutdownGrace = 3 * time.Second
