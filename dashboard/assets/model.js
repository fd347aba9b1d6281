// trellis dashboard: what the page shows, computed from the events alone
// (no DOM), so that it can be tested outside a browser (node). app.js
// draws it.
(function (root) {
  "use strict";
  var PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  // Dash patterns told apart at a glance, solid first.
  var DASHES = ["", "8 4", "2 3", "10 3 2 3"];
  var DASH_NAMES = ["solid", "dashed", "dotted", "dash-dot"];

  // paramsKey is a run's grid point as one string (its swept values, keys
  // sorted).
  function paramsKey(params) {
    var p = params || {};
    return Object.keys(p).sort().map(function (k) { return k + "=" + p[k]; }).join("\u0000");
  }

  // seriesGroups groups the runs of a sweep by variant (label) and grid
  // point (swept values): the seeds of one configuration are one series.
  // Groups come in the order of their first run; each lists its runs'
  // numbers. runs may have holes.
  function seriesGroups(runs) {
    var groups = [], byKey = {};
    runs.forEach(function (r, i) {
      if (!r) return;
      var key = r.label + "\u0001" + paramsKey(r.params);
      var g = byKey[key];
      if (!g) {
        g = byKey[key] = { label: r.label, params: r.params || {}, runs: [], seeds: [] };
        groups.push(g);
      }
      g.runs.push(i);
      g.seeds.push(r.seed);
    });
    groups.forEach(function (g, k) { g.key = String(k + 1); });
    assignStyles(groups);
    return groups;
  }

  // assignStyles gives every group a colour and a dash pattern. When the
  // variants fit the palette and each has few grid points, the colour is
  // the variant and the dash its grid point (rule by colour, attack
  // strength by dash); otherwise groups take colours in turn and the dash
  // changes every ten, so up to forty series differ in colour or dash.
  // Each group also has its number (key), drawn at the end of its line.
  function assignStyles(groups) {
    var labels = [], within = {};
    groups.forEach(function (g) {
      if (labels.indexOf(g.label) < 0) labels.push(g.label);
      within[g.label] = (within[g.label] || 0) + 1;
    });
    var most = 0;
    Object.keys(within).forEach(function (l) { most = Math.max(most, within[l]); });
    var byVariant = labels.length > 1 && labels.length <= PALETTE.length && most <= DASHES.length;
    var seen = {};
    groups.forEach(function (g, k) {
      var c, d;
      if (byVariant) {
        c = labels.indexOf(g.label);
        d = seen[g.label] || 0;
        seen[g.label] = d + 1;
      } else {
        c = k % PALETTE.length;
        d = Math.floor(k / PALETTE.length) % DASHES.length;
      }
      g.color = PALETTE[c];
      g.dash = DASHES[d];
      g.dashName = DASH_NAMES[d];
    });
    return groups;
  }

  // meanBand summarizes a group's curves ([[round, value]] per run) round
  // by round: the mean over the runs that have the round, and the band
  // from their smallest to their largest value (min–max over seeds) where
  // two or more have it. Rounds ascending; non-finite values left out.
  function meanBand(curves) {
    var at = {};
    curves.forEach(function (c) {
      c.forEach(function (p) {
        if (typeof p[1] !== "number" || !isFinite(p[1])) return;
        (at[p[0]] = at[p[0]] || []).push(p[1]);
      });
    });
    var rounds = Object.keys(at).map(Number).sort(function (a, b) { return a - b; });
    var pts = [], band = [];
    rounds.forEach(function (r) {
      var v = at[r], s = 0;
      v.forEach(function (x) { s += x; });
      pts.push([r, s / v.length]);
      if (v.length >= 2) band.push([r, Math.min.apply(null, v), Math.max.apply(null, v)]);
    });
    return { pts: pts, band: band, n: curves.length };
  }

  // sliderState is the round slider of a run whose records of the given
  // rounds are on hand (ascending), the round asked for (sel; < 0 or
  // follow: the latest) and the run's planned number of rounds: the
  // slider's range is the rounds on hand, so the knob sits where the label
  // says, and the label says how many rounds the run has when they are not
  // all there yet.
  function sliderState(present, sel, follow, planned) {
    if (!present.length) return { min: 0, max: 0, value: 0, text: "–", round: -1 };
    var lo = present[0], hi = present[present.length - 1];
    var v = follow || sel < 0 || sel > hi ? hi : Math.max(lo, sel);
    var text = v + " of " + lo + "–" + hi;
    if (planned > hi + 1) text += " (" + (hi + 1) + " of " + planned + " rounds run so far)";
    return { min: lo, max: hi, value: v, text: text, round: v };
  }

  // connState is what the connection badge says: ended (the server said
  // no more events will come: the run finished, or trellis serve shows
  // runs from disk), open (the stream is up) or neither (lost, the
  // browser retrying). Runs by status make the ended text, which also
  // counts the runs with an error (a failed run, a damaged directory).
  function connState(runs, ended, open) {
    if (ended) {
      var n = {}, total = 0, bad = 0;
      runs.forEach(function (r) { if (r) { n[r.status] = (n[r.status] || 0) + 1; total++; if (r.error) bad++; } });
      var text = n.finished === total ? (total > 1 ? "finished (all " + total + " runs)" : "finished")
        : "ended: " + Object.keys(n).sort().map(function (s) { return n[s] + " " + s; }).join(", ");
      if (bad) text += " · " + bad + (bad > 1 ? " runs" : " run") + " with errors (see the table)";
      return { text: text + (ended.note ? " · " + ended.note : ""), cls: "conn done" };
    }
    if (open) return { text: "live", cls: "conn live" };
    return { text: "disconnected (the run may have ended); reconnecting…", cls: "conn off" };
  }

  // shortKey is a swept key's last dotted part ("fraction" for
  // "adversary.fraction"), unless two keys share it.
  function shortKeys(keys) {
    var last = keys.map(function (k) { var i = k.lastIndexOf("."); return i >= 0 ? k.slice(i + 1) : k; });
    return last.map(function (s, i) { return last.indexOf(s) === last.lastIndexOf(s) ? s : keys[i]; });
  }

  // spreadLabels places end-of-line labels at ys (pixels), in the same
  // order, at least gap apart and within [lo, hi], each as near its line as
  // that allows.
  function spreadLabels(ys, gap, lo, hi) {
    var idx = ys.map(function (_, i) { return i; }).sort(function (a, b) { return ys[a] - ys[b] || a - b; });
    var out = ys.slice();
    var prev = -Infinity;
    idx.forEach(function (i) { out[i] = Math.max(ys[i], prev + gap, lo); prev = out[i]; });
    // Pushed past the bottom: shift up from the end.
    var next = Infinity;
    for (var k = idx.length - 1; k >= 0; k--) {
      var i = idx[k];
      out[i] = Math.min(out[i], next - gap, hi);
      next = out[i];
    }
    return out;
  }

  // xAxes are the x axes a run's charts may take: rounds for a run in
  // rounds; for an asynchronous run (info.async), the virtual time at a
  // window's end, the mean steps per node by then (when the frames carry
  // it: read from disk, or live from a simulation's step records), or the
  // window's index. The first is the default.
  function xAxes(info, frames) {
    if (!(info && info.async && info.async.window > 0)) return [{ key: "round", label: "round" }];
    var ax = [{ key: "time", label: "virtual time (s)" }];
    if (frames.some(function (f) { return typeof f.steps === "number"; })) ax.push({ key: "steps", label: "steps per node (mean)" });
    ax.push({ key: "round", label: "window (of " + info.async.window + " s)" });
    return ax;
  }

  // xOf is a frame's position on axis key (NaN where it has none); a
  // frame without its time (a live one without step records) is put at
  // its window's end.
  function xOf(f, key, info) {
    if (key === "time" && typeof f.time !== "number" && info && info.async) return (f.round + 1) * info.async.window;
    var v = key === "round" ? f.round : f[key];
    return typeof v === "number" ? v : NaN;
  }

  var M = { xAxes: xAxes, xOf: xOf, PALETTE: PALETTE, DASHES: DASHES, seriesGroups: seriesGroups, assignStyles: assignStyles, meanBand: meanBand,
    sliderState: sliderState, connState: connState, shortKeys: shortKeys, spreadLabels: spreadLabels };
  if (typeof module === "object" && module.exports) module.exports = M;
  else root.TrellisModel = M;
})(this);
