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
//   - When the runs can no longer change (a live sweep is over, or
//     trellis serve reads them from disk) the server adds an end event
//     (End): the page then says "finished" and stops its stream instead of
//     showing a lost connection, and a browser reconnecting later is told
//     204 No Content, which stops an EventSource for good.
//   - What the page shows is computed apart from the DOM in model.js
//     (tested with node): the sweep's comparison groups the runs by
//     variant and grid point and draws each group's mean over seeds with
//     a min–max band, its number at the line's end and its long labels in
//     a table under the plot (no legend to cut short); the colour is the
//     variant and the dash the grid point when that tells every group
//     apart. The round slider spans the rounds on hand, so the knob and
//     the label agree while a run is still going.
//   - The server serves its page and its API only, and binds a
//     non-loopback address only when asked to (Listen); an address on
//     every interface is shown as 127.0.0.1 with a note (PageURL).
package dashboard
