// Package dashboard shows an experiment in a browser: a live view of a
// running simulation or sweep (records streamed by Server-Sent Events from
// a metrics.Latest sink), the same page for finished run directories
// (trellis serve), and one self-contained HTML file holding a run's or a
// sweep's whole result (report.html).
//
// Choices recorded here:
//   - The page is plain JavaScript, SVG and CSS written for it, embedded
//     with go:embed: no CDN, no library, no build step; it works offline.
//   - Everything the page shows is one ordered list of events (a run's
//     description, a round's frame); the server keeps the list and every
//     viewer reads it from where it is (its SSE id), so a viewer that
//     connects late or reconnects gets the history, and a slow one lags
//     behind on its own goroutine: adding an event never waits for a
//     viewer. The list is held in memory for the life of the server.
//   - A live run feeds the list through a metrics.Latest sink: a record the
//     dashboard is too slow for is skipped, never waited for, so the run's
//     rounds and its metrics.jsonl are the same with and without it.
//   - Edge weights (who gave whom how much): a live run takes them from
//     metrics.Round.Live; a finished run's page from its edges.jsonl
//     (rundir.ReadEdges; written unless run.edges = false) over the
//     round's graph rebuilt from its config. A run directory without the
//     file (written before it existed, or with run.edges = false) shows
//     the graph without weights.
//   - The server serves its page and its API only, and binds a
//     non-loopback address only when asked to (Listen).
package dashboard
