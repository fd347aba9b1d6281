// trellis dashboard: plain JavaScript and SVG, no library. The page reads
// one ordered list of events — {"type":"run"} descriptions and
// {"type":"round"} frames — from the server's event stream, or from
// window.TRELLIS_EVENTS in a self-contained report file.
(function () {
  "use strict";
  var TM = window.TrellisModel; // model.js: what to show, computed without the DOM
  var PALETTE = TM.PALETTE;
  var HONEST = "#1f77b4", BYZ = "#d62728";
  var runs = [];        // RunInfo by run number
  var frames = [];      // per run: array indexed by round (holes allowed)
  var selRun = -1, userPickedRun = false;
  var selRound = -1, follow = true;
  var xAxis = "time"; // an asynchronous run's x axis (TM.xAxes)
  var sortKey = "id", sortDir = 1;
  var pending = false;
  var ended = null, open = false, es = null; // the stream: its end event, whether it is up
  var $ = function (id) { return document.getElementById(id); };
  // Every metric's label and unit, by name: the report's one label table
  // (report.Metrics), given by the server or the report file.
  var LABELS = window.TRELLIS_LABELS || {};
  function label(name) { return LABELS[name] || name; }

  function report(msg) {
    var e = $("errors");
    if (!e) return;
    e.hidden = false;
    e.textContent += msg + "\n";
  }
  window.addEventListener("error", function (ev) { report("error: " + ev.message); });

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  function fmt(x, d) {
    if (x === null || x === undefined || typeof x !== "number" || !isFinite(x)) return "–";
    return x.toFixed(d === undefined ? 3 : d);
  }

  function ingest(ev) {
    if (!ev || typeof ev !== "object") return;
    if (ev.type === "run") {
      runs[ev.run] = ev;
      if (!frames[ev.run]) frames[ev.run] = [];
    } else if (ev.type === "end") {
      // No more events will come (the run finished, or the runs are read
      // from disk): stop the stream, or the browser would reconnect.
      ended = ev;
      if (es) es.close();
    } else if (ev.type === "round") {
      if (!frames[ev.run]) frames[ev.run] = [];
      frames[ev.run][ev.round] = ev;
      if (!userPickedRun) selRun = ev.run;
    }
  }

  function schedule() {
    if (pending) return;
    pending = true;
    setTimeout(function () {
      pending = false;
      try { render(); } catch (e) { report("render: " + (e && e.stack || e)); }
    }, 60);
  }

  // ---- charts ----------------------------------------------------------

  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) { hi = lo + 1; }
    var span = hi - lo, step = Math.pow(10, Math.floor(Math.log10(span / n)));
    var err = span / n / step;
    if (err >= 7.5) step *= 10; else if (err >= 3.5) step *= 5; else if (err >= 1.5) step *= 2;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toFixed(10));
    return out;
  }

  // lineChart draws series [{name, color, pts: [[x, y]], band: [[x, lo, hi]], dash, key}]
  // into el as an SVG line chart: with a legend right of the axes, or
  // with o.endKeys each series' key at the end of its line instead (the
  // caller lists the keys in a table).
  function lineChart(el, o) {
    var W = 520, H = 260, L = 52, R = o.legendWidth || 150, T = 12, B = 36;
    var xs = [], ys = [];
    o.series.forEach(function (s) {
      s.pts.forEach(function (p) { if (isFinite(p[1])) { xs.push(p[0]); ys.push(p[1]); } });
      (s.band || []).forEach(function (b) { if (isFinite(b[1]) && isFinite(b[2])) { ys.push(b[1], b[2]); } });
    });
    var x0 = o.x0 !== undefined ? o.x0 : (xs.length ? Math.min.apply(null, xs) : 0);
    var x1 = o.x1 !== undefined ? o.x1 : (xs.length ? Math.max.apply(null, xs) : 1);
    if (x1 <= x0) x1 = x0 + 1;
    var y0 = o.y0 !== undefined ? o.y0 : (ys.length ? Math.min.apply(null, ys) : 0);
    var y1 = o.y1 !== undefined ? o.y1 : (ys.length ? Math.max.apply(null, ys) : 1);
    if (o.y0 === undefined && y0 > 0 && y0 < (y1 - y0)) y0 = 0;
    if (y1 <= y0) { y1 = y0 + (Math.abs(y0) || 1) * 0.1; }
    var pw = W - L - R, ph = H - T - B;
    var sx = function (x) { return L + (x - x0) / (x1 - x0) * pw; };
    var sy = function (y) { return T + ph - (y - y0) / (y1 - y0) * ph; };
    var svg = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ' + W + " " + H + '" role="img">'];
    svg.push('<g class="axis">');
    niceTicks(y0, y1, 5).forEach(function (t) {
      svg.push('<line class="gridline" x1="' + L + '" x2="' + (L + pw) + '" y1="' + sy(t) + '" y2="' + sy(t) + '"/>');
      svg.push('<text x="' + (L - 6) + '" y="' + (sy(t) + 4) + '" text-anchor="end">' + (+t.toPrecision(4)) + "</text>");
    });
    niceTicks(x0, x1, 8).forEach(function (t) {
      if (o.integerX && t !== Math.round(t)) return;
      svg.push('<text x="' + sx(t) + '" y="' + (T + ph + 16) + '" text-anchor="middle">' + (+t.toPrecision(4)) + "</text>");
    });
    svg.push('<path d="M' + L + "," + T + "V" + (T + ph) + "H" + (L + pw) + '" fill="none"/>');
    svg.push('<text x="' + (L + pw / 2) + '" y="' + (H - 4) + '" text-anchor="middle">' + esc(o.xlabel || label("round")) + "</text>");
    svg.push('<text transform="translate(12,' + (T + ph / 2) + ') rotate(-90)" text-anchor="middle">' + esc(o.ylabel || "") + "</text>");
    svg.push("</g>");
    o.series.forEach(function (s) {
      var band = (s.band || []).filter(function (b) { return isFinite(b[1]) && isFinite(b[2]); });
      if (band.length > 1) {
        var d = "M" + band.map(function (b) { return sx(b[0]) + "," + sy(Math.min(y1, b[2])); }).join("L");
        d += "L" + band.slice().reverse().map(function (b) { return sx(b[0]) + "," + sy(Math.max(y0, b[1])); }).join("L") + "Z";
        svg.push('<path class="band" fill="' + s.color + '"' + (o.bandOpacity ? ' fill-opacity="' + o.bandOpacity + '"' : "") + ' d="' + d + '"/>');
      }
    });
    o.series.forEach(function (s) {
      var pts = s.pts.filter(function (p) { return isFinite(p[1]); });
      if (!pts.length) return;
      var d = "M" + pts.map(function (p) { return sx(p[0]).toFixed(1) + "," + sy(p[1]).toFixed(1); }).join("L");
      svg.push('<path class="curve" data-name="' + esc(s.name) + '" data-points="' + pts.length + '" stroke="' + s.color + '"' +
        (s.dash ? ' stroke-dasharray="' + s.dash + '"' : "") + ' d="' + d + '"/>');
      if (pts.length === 1) svg.push('<circle cx="' + sx(pts[0][0]) + '" cy="' + sy(pts[0][1]) + '" r="3" fill="' + s.color + '"/>');
    });
    if (o.marker !== undefined && o.marker >= x0 && o.marker <= x1) {
      svg.push('<line class="marker" x1="' + sx(o.marker) + '" x2="' + sx(o.marker) + '" y1="' + T + '" y2="' + (T + ph) + '"/>');
    }
    if (o.endKeys) {
      var ends = o.series.map(function (s) {
        var pts = s.pts.filter(function (p) { return isFinite(p[1]); });
        return pts.length ? pts[pts.length - 1] : null;
      });
      var drawn = o.series.filter(function (_, k) { return ends[k]; });
      var at = TM.spreadLabels(drawn.map(function (s) { var e = ends[o.series.indexOf(s)]; return sy(Math.max(y0, Math.min(y1, e[1]))); }), 12, T + 4, T + ph);
      svg.push('<g class="keys">');
      drawn.forEach(function (s, k) {
        var e = ends[o.series.indexOf(s)], ex = sx(e[0]), ey = sy(Math.max(y0, Math.min(y1, e[1])));
        svg.push('<path class="leader" stroke="' + s.color + '" d="M' + ex.toFixed(1) + "," + ey.toFixed(1) + "L" + (L + pw + 8) + "," + at[k].toFixed(1) + '"/>');
        svg.push('<text class="key" data-key="' + esc(s.key) + '" x="' + (L + pw + 10) + '" y="' + (at[k] + 4).toFixed(1) + '" fill="' + s.color + '">' + esc(s.key) + "</text>");
      });
      svg.push("</g></svg>");
      el.innerHTML = svg.join("");
      return;
    }
    svg.push('<g class="legend">');
    o.series.forEach(function (s, k) {
      var y = T + 8 + k * 16;
      if (y > H - 8) return;
      svg.push('<line x1="' + (W - R + 10) + '" x2="' + (W - R + 30) + '" y1="' + y + '" y2="' + y + '" stroke="' + s.color + '" stroke-width="2"' +
        (s.dash ? ' stroke-dasharray="' + s.dash + '"' : "") + "/>");
      svg.push('<text x="' + (W - R + 35) + '" y="' + (y + 4) + '">' + esc(s.name.length > 22 ? s.name.slice(0, 21) + "…" : s.name) + "</text>");
    });
    svg.push("</g></svg>");
    el.innerHTML = svg.join("");
  }

  function roundsOf(run) { return (frames[run] || []).filter(function (f) { return !!f; }); }

  // accuracyOf is the accuracy a run's comparison curve draws: the one
  // its strategy makes the headline (RunInfo.accuracy: local for
  // personalized methods), global only where the run measured it.
  function accuracyOf(run) {
    var info = runs[run];
    var ev = roundsOf(run).filter(function (f) { return f.evaluated; });
    var global = ev.some(function (f) { return f.global.mean > 0; });
    return info && info.accuracy === "honest_global_acc" && global ? "honest_global_acc" : "honest_local_acc";
  }
  function accuracyCurve(run) {
    var g = accuracyOf(run) === "honest_global_acc";
    return roundsOf(run).filter(function (f) { return f.evaluated; }).map(function (f) { return [f.round, g ? f.global.mean : f.local.mean]; });
  }

  // ---- rendering -------------------------------------------------------

  // The address's fragment may ask for a run and a round (#run=1&round=4):
  // applied once that round has arrived, through the slider as a viewer
  // would move it.
  var want = (function () {
    var w = {};
    (location.hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
      var p = kv.split("=");
      if ((p[0] === "run" || p[0] === "round") && /^[0-9]+$/.test(p[1] || "")) w[p[0]] = +p[1];
    });
    return (w.run !== undefined || w.round !== undefined) ? w : null;
  })();

  function applyWant() {
    if (!want) return;
    var run = want.run !== undefined ? want.run : selRun;
    if (!runs[run] && !frames[run]) return;
    if (want.run !== undefined) { selRun = run; userPickedRun = true; }
    if (want.round === undefined) { want = null; return; }
    if (!(frames[run] && frames[run][want.round])) return;
    var r = want.round;
    want = null;
    renderRun();
    var slider = $("slider");
    slider.value = String(r);
    slider.dispatchEvent(new Event("input"));
  }

  function render() {
    applyWant();
    var n = runs.length;
    if (selRun < 0 && n > 0) selRun = 0;
    $("sweep").hidden = n <= 1;
    if (n > 1) renderSweep();
    renderRun();
    showConn();
    document.body.setAttribute("data-rendered", String((+document.body.getAttribute("data-rendered") || 0) + 1));
  }

  function finalOf(r, k) {
    var info = runs[r];
    if (info && info.global === false && /global/.test(k)) return undefined; // not measured
    if (info && info.final && typeof info.final[k] === "number") return info.final[k];
    return undefined;
  }

  // wbr lets a run's path break after its slashes and equals signs, and
  // soft lets a label or a value break after "_" and "(", so that the
  // sweep's tables fit a narrow page.
  function wbr(s) { return esc(s).replace(/([\/=])/g, "$1<wbr>"); }
  function soft(s) { return esc(s).replace(/([_(])/g, "$1<wbr>"); }

  // swatch is a short line in a series' colour and dash: its key in the
  // plot's table and the runs table.
  function swatch(g) {
    return '<svg class="swatch" viewBox="0 0 36 10" width="36" height="10"><line x1="1" x2="35" y1="5" y2="5" stroke="' + g.color + '" stroke-width="2.5"' +
      (g.dash ? ' stroke-dasharray="' + g.dash + '"' : "") + "/></svg>";
  }

  // span is "mean (min–max)" of values, or the one value.
  function span(vs) {
    vs = vs.filter(function (v) { return typeof v === "number" && isFinite(v); });
    if (!vs.length) return "–";
    var s = 0;
    vs.forEach(function (v) { s += v; });
    if (vs.length === 1) return fmt(vs[0]);
    return fmt(s / vs.length) + " (" + fmt(Math.min.apply(null, vs)) + "–" + fmt(Math.max.apply(null, vs)) + ")";
  }

  function renderSweep() {
    var keys = [];
    runs.forEach(function (r) { if (r && r.params) Object.keys(r.params).forEach(function (k) { if (keys.indexOf(k) < 0) keys.push(k); }); });
    keys.sort();
    var short = TM.shortKeys(keys);
    var keyHeads = keys.map(function (k, j) { return '<th class="l narrow" title="' + esc(k) + '">' + esc(short[j]) + "</th>"; }).join("");
    var groups = TM.seriesGroups(runs), groupOf = {};
    groups.forEach(function (g) { g.runs.forEach(function (i) { groupOf[i] = g; }); });
    var head = "<tr><th class=l>#</th><th class=l>series</th><th class=l>run</th><th class=l>label</th>" + keyHeads +
      "<th>seed</th><th class=l>status</th><th>rounds done</th>" + ["final_honest_global_acc", "final_honest_local_acc", "final_delta_max"].map(function (k) { return "<th>" + esc(label(k)) + "</th>"; }).join("") + "</tr>";
    $("runs").tHead.innerHTML = head;
    var rows = runs.map(function (r, i) {
      if (!r) return "";
      var fs = roundsOf(i), done = fs.length, g = groupOf[i];
      // A run kept on file by a sweep that shows it without its rounds:
      // the rounds its summary counts.
      if (!done && r.final && typeof r.final.rounds === "number") done = r.final.rounds;
      return '<tr data-run="' + i + '"' + (i === selRun ? ' class="sel"' : "") + "><td class=l>" + i + '</td><td class="l series">' + swatch(g) + " " + esc(g.key) +
        '</td><td class="l path">' + wbr(r.dir || ".") + "</td><td class=l>" + soft(r.label) + "</td>" +
        keys.map(function (k) { return "<td class=l>" + soft((r.params || {})[k] || "") + "</td>"; }).join("") +
        "<td>" + r.seed + '</td><td class="l status-' + esc(r.status) + '">' + esc(r.status) + (r.error ? ' <span class="error">(' + esc(r.error) + ")</span>" : "") + "</td><td>" + done + "/" + r.rounds + "</td>" +
        "<td>" + fmt(finalOf(i, "final_honest_global_acc")) + "</td><td>" + fmt(finalOf(i, "final_honest_local_acc")) + "</td><td>" + fmt(finalOf(i, "final_delta_max")) + "</td></tr>";
    });
    $("runs").tBodies[0].innerHTML = rows.join("");

    // The comparison: one series per configuration (variant and grid
    // point), its mean over seeds and the min–max band; the long labels go
    // in the table under the plot, the plot has each series' key.
    var kinds = {};
    runs.forEach(function (r, i) { if (r && roundsOf(i).length) kinds[accuracyOf(i)] = true; });
    var drawn = Object.keys(kinds), mixed = drawn.length > 1;
    var series = [], keyRows = [];
    groups.forEach(function (g) {
      var have = g.runs.filter(function (i) { return roundsOf(i).length; });
      var mb = TM.meanBand(have.map(accuracyCurve));
      if (mb.pts.length) series.push({ name: g.key, key: g.key, color: g.color, dash: g.dash, pts: mb.pts, band: mb.band });
      var acc = have.length ? accuracyOf(have[0]) : "";
      keyRows.push('<tr data-series="' + esc(g.key) + '"><td class="l key">' + swatch(g) + ' <b style="color:' + g.color + '">' + esc(g.key) + "</b></td><td class=l>" + soft(g.label) + "</td>" +
        keys.map(function (k) { return "<td class=l>" + soft(g.params[k] === undefined ? "" : g.params[k]) + "</td>"; }).join("") +
        (mixed ? "<td class=l>" + (acc === "honest_global_acc" ? "global" : acc ? "local" : "–") + "</td>" : "") +
        "<td class=l>" + g.seeds.join(", ") + "</td><td class=l>" + g.runs.map(function (i) { return "#" + i; }).join(", ") + "</td>" +
        "<td>" + span(g.runs.map(function (i) { return finalOf(i, "final_" + accuracyOf(i)); })) + "</td></tr>");
    });
    lineChart($("compare"), { series: series, ylabel: drawn.length === 1 ? label(drawn[0]) : "honest accuracy (fraction)", y0: 0, y1: 1, integerX: true,
      endKeys: true, legendWidth: 40, bandOpacity: groups.length > 6 ? 0.6 : 1 });
    var kt = $("compare-key");
    kt.tHead.innerHTML = "<tr><th class=l>key</th><th class=l>label</th>" + keyHeads + (mixed ? "<th class=l>accuracy</th>" : "") +
      "<th class=l>seeds</th><th class=l>runs</th><th>" + esc(drawn.length === 1 ? label("final_" + drawn[0]) : "final honest accuracy (fraction)") + ": mean (min–max)</th></tr>";
    kt.tBodies[0].innerHTML = keyRows.join("");
  }

  function renderRun() {
    var fs = roundsOf(selRun), info = runs[selRun];
    if (!info && !fs.length) return;
    var st = TM.sliderState(fs.map(function (f) { return f.round; }), selRound, follow, info && info.rounds ? info.rounds : 0);
    var slider = $("slider");
    slider.min = String(st.min);
    slider.max = String(st.max);
    slider.value = String(st.value);
    if (fs.length) selRound = st.round;
    $("round-out").textContent = st.text;
    if (info) {
      $("run-title").textContent = (runs.length > 1 ? "Run " + selRun + ": " : "") + info.label + (info.dir ? " — " + info.dir : "");
      $("run-meta").textContent = info.nodes + " nodes, " + info.rounds + " rounds, strategy " + info.strategy + ", seed " + info.seed + " · " + info.status +
        (fs.length ? " · " + fs.length + " rounds received" : "") + " · accuracies are fractions, rounds count from 0";
      $("run-error").hidden = !info.error;
      $("run-error").textContent = info.error || "";
      $("cmd").textContent = info.command || "";
      $("config").textContent = info.config || "";
      $("manifest").textContent = info.manifest || "";
      $("details").hidden = !(info.config || info.manifest || info.command);
    }
    // The x axis: rounds, or for an asynchronous run virtual time, steps
    // per node or windows (the selector under the charts).
    var axes = TM.xAxes(info, fs);
    var ax = axes.filter(function (a) { return a.key === xAxis; })[0] || axes[0];
    var X = function (f) { return TM.xOf(f, ax.key, info); };
    var xl = axes.length > 1 ? ax.label : undefined; // a run in rounds: the usual label
    var at = frames[selRun] && frames[selRun][selRound];
    var mk = at ? X(at) : undefined;
    var sel = $("axis");
    $("axis-box").hidden = axes.length < 2;
    if (sel.options.length !== axes.length) {
      sel.innerHTML = axes.map(function (a) { return '<option value="' + a.key + '">' + esc(a.label) + "</option>"; }).join("");
    }
    sel.value = ax.key;
    var ev = fs.filter(function (f) { return f.evaluated; });
    var hasGlobal = ev.some(function (f) { return f.global.mean > 0; });
    var acc = [{ name: "local (mean)", color: PALETTE[0], pts: ev.map(function (f) { return [X(f), f.local.mean]; }),
      band: ev.map(function (f) { return [X(f), f.local.mean - f.local.std, f.local.mean + f.local.std]; }) }];
    if (hasGlobal) acc.push({ name: "global (mean)", color: PALETTE[1], pts: ev.map(function (f) { return [X(f), f.global.mean]; }),
      band: ev.map(function (f) { return [X(f), f.global.mean - f.global.std, f.global.mean + f.global.std]; }) });
    acc.push({ name: "local (min)", color: PALETTE[0], dash: "2 3", pts: ev.map(function (f) { return [X(f), f.local.min]; }) });
    lineChart($("c-acc"), { series: acc, ylabel: "honest accuracy (fraction)", y0: 0, y1: 1, marker: mk, integerX: ax.key === "round", xlabel: xl });
    lineChart($("c-byz"), { series: [
      { name: "δ_max", color: BYZ, pts: fs.map(function (f) { return [X(f), f.delta_max]; }) },
      { name: "mean", color: PALETTE[4], pts: fs.map(function (f) { return [X(f), f.mean_byz_weight]; }) }],
      ylabel: "Byzantine weight (0–1)", y0: 0, marker: mk, integerX: ax.key === "round", xlabel: xl });
    lineChart($("c-loss"), { series: [{ name: "honest loss", color: PALETTE[2], pts: ev.map(function (f) { return [X(f), f.loss]; }) }],
      ylabel: label("honest_loss"), marker: mk, integerX: ax.key === "round", xlabel: xl });
    var tr = fs.filter(function (f) { return f.trust; });
    $("f-trust").hidden = !tr.length;
    if (tr.length) {
      var tk = [["neighbor_honest", "T_topo: honest neighbours", HONEST, ""], ["neighbor_byzantine", "T_topo: Byzantine neighbours", BYZ, ""],
        ["screened_honest", "screened: honest", HONEST, "4 3"], ["screened_byzantine", "screened: Byzantine", BYZ, "4 3"]];
      lineChart($("c-trust"), { series: tk.map(function (k) {
        return { name: k[1], color: k[2], dash: k[3], pts: tr.filter(function (f) { return typeof f.trust[k[0]] === "number"; }).map(function (f) { return [X(f), f.trust[k[0]]]; }) };
      }), ylabel: "T_topo or fraction (0–1)", y0: 0, y1: 1, marker: mk, integerX: ax.key === "round", xlabel: xl, legendWidth: 180 });
    }
    var sc = fs.filter(function (f) { return f.scores; });
    $("f-scores").hidden = !sc.length;
    if (sc.length) {
      var kinds = [];
      sc.forEach(function (f) { Object.keys(f.scores).forEach(function (k) { if (kinds.indexOf(k) < 0) kinds.push(k); }); });
      kinds.sort();
      var ss = [];
      kinds.forEach(function (k, ki) {
        [["honest", HONEST], ["byzantine", BYZ]].forEach(function (side) {
          var pts = sc.filter(function (f) { var v = f.scores[k] && f.scores[k][side[0]]; return v && typeof v.mean === "number"; });
          ss.push({ name: k + ": " + side[0], color: side[1], dash: ki ? "5 3" : "",
            pts: pts.map(function (f) { return [X(f), f.scores[k][side[0]].mean]; }),
            band: ki ? [] : pts.map(function (f) { return [X(f), f.scores[k][side[0]].min, f.scores[k][side[0]].max]; }) });
        });
      });
      lineChart($("c-scores"), { series: ss, ylabel: "agreement score (0–1)", marker: mk, integerX: ax.key === "round", xlabel: xl, legendWidth: 180 });
    }
    var pr = fs.filter(function (f) { return f.privacy; });
    $("f-eps").hidden = !pr.length;
    if (pr.length) {
      // The accountant of the ε, named when it is not the default RDP.
      var acct = pr[pr.length - 1].privacy.accountant;
      var by = acct ? " (" + acct + ")" : "";
      lineChart($("c-eps"), { series: [
        { name: "max ε" + by, color: PALETTE[3], pts: pr.map(function (f) { return [X(f), f.privacy.honest_max_epsilon]; }) },
        { name: "mean ε" + by, color: PALETTE[5], pts: pr.map(function (f) { return [X(f), f.privacy.honest_mean_epsilon]; }) }],
        ylabel: label("epsilon"), y0: 0, marker: mk, integerX: ax.key === "round", xlabel: xl });
    }
    var sf = fs.filter(function (f) { return f.staleness; });
    $("f-stale").hidden = !sf.length;
    if (sf.length) {
      lineChart($("c-stale"), { series: [
        { name: "mean", color: PALETTE[0], pts: sf.filter(function (f) { return typeof f.staleness.mean === "number"; }).map(function (f) { return [X(f), f.staleness.mean]; }) },
        { name: "max", color: PALETTE[3], pts: sf.map(function (f) { return [X(f), f.staleness.max]; }) }],
        ylabel: "staleness (receiver steps)", y0: 0, marker: mk, integerX: ax.key === "round", xlabel: xl });
    }
    var f = frames[selRun] && frames[selRun][selRound];
    renderGraph(f);
    renderNodes(f);
  }

  function renderGraph(f) {
    var g = $("graph");
    if (!f) { g.innerHTML = ""; $("graph-note").textContent = "no record of this round (a live view may skip rounds)"; return; }
    var n = f.nodes.length, S = 520, C = S / 2, Rr = S / 2 - 30;
    var rad = n > 60 ? 4 : 7;
    var pos = f.nodes.map(function (_, i) { var a = 2 * Math.PI * i / n - Math.PI / 2; return [C + Rr * Math.cos(a), C + Rr * Math.sin(a)]; });
    var byz = f.nodes.map(function (x) { return x.byz; });
    var maxIn = {};
    f.edges.forEach(function (e) { if (typeof e[2] === "number") maxIn[e[1]] = Math.max(maxIn[e[1]] || 0, e[2]); });
    var svg = ['<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ' + S + " " + S + '" data-round="' + f.round + '" data-nodes="' + n + '" data-edges="' + f.edges.length + '">'];
    svg.push('<defs><marker id="arr" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="5" markerHeight="5" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#555"/></marker></defs>');
    f.edges.forEach(function (e) {
      var a = pos[e[0]], b = pos[e[1]];
      if (!a || !b) return;
      var w = e[2], known = typeof w === "number";
      var op = known ? (w > 0 ? 0.15 + 0.85 * w / (maxIn[e[1]] || 1) : 0.06) : 0.25;
      var dx = b[0] - a[0], dy = b[1] - a[1], len = Math.sqrt(dx * dx + dy * dy) || 1;
      var ex = b[0] - dx / len * (rad + 2), ey = b[1] - dy / len * (rad + 2);
      svg.push('<line class="edge" x1="' + a[0].toFixed(1) + '" y1="' + a[1].toFixed(1) + '" x2="' + ex.toFixed(1) + '" y2="' + ey.toFixed(1) +
        '" stroke="' + (byz[e[0]] ? BYZ : "#333") + '" stroke-opacity="' + op.toFixed(3) + '" stroke-width="' + (known && w > 0 ? 1.5 : 1) + '"' +
        (byz[e[0]] ? ' stroke-dasharray="4 2"' : "") + (n <= 40 ? ' marker-end="url(#arr)"' : "") + "><title>" + e[0] + " → " + e[1] + ": " + (known ? fmt(w) : "weight not recorded") + "</title></line>");
    });
    f.nodes.forEach(function (x, i) {
      svg.push('<circle class="node ' + (x.byz ? "byz" : "honest") + '" cx="' + pos[i][0].toFixed(1) + '" cy="' + pos[i][1].toFixed(1) + '" r="' + rad + '" fill="' + (x.byz ? BYZ : HONEST) +
        '"' + (x.missing ? ' fill-opacity="0.3"' : "") + "><title>node " + x.id + (x.byz ? " (Byzantine)" : " (honest)") + (x.ev ? ", local acc " + fmt(x.local) : "") + "</title></circle>");
      if (n <= 40) svg.push('<text x="' + pos[i][0].toFixed(1) + '" y="' + (pos[i][1] + 3.5).toFixed(1) + '" text-anchor="middle" font-size="9" fill="#fff">' + x.id + "</text>");
    });
    svg.push("</svg>");
    g.innerHTML = svg.join("");
    $("graph-note").textContent = "round " + f.round + ": " + n + " nodes, " + f.edges.length + " edges" +
      (f.weighted ? "" : (f.edges.length ? " (no weights: this run directory has no edges.jsonl; run.edges = true writes it)" : " (no graph: this run directory has no edges.jsonl and its config cannot rebuild the graph here)"));
  }

  var COLS = [["id", "node", "l"], ["role", "role", "l"], ["local", label("local_acc")], ["global", label("global_acc")], ["loss", label("local_loss")], ["indeg", "in-degree"],
    ["kept", "weights kept"], ["byzw", label("byz_weight")], ["rejected", label("rejected")], ["reasons", "rejections by reason", "l"]];

  function cell(x, k) {
    switch (k) {
      case "role": return x.byz ? "Byzantine" : "honest";
      case "reasons": return x.reasons ? Object.keys(x.reasons).sort().map(function (r) { return r + " " + x.reasons[r]; }).join(", ") : "";
      case "kept": return x.kept < 0 ? "–" : x.kept + "/" + x.indeg;
      case "global": return x.ev && measuredGlobal() ? fmt(x[k]) : "–";
      case "local": case "loss": return x.ev ? fmt(x[k]) : "–";
      case "byzw": return fmt(x.byzw);
      case "indeg": return x.indeg < 0 ? "–" : String(x.indeg);
      default: return String(x[k]);
    }
  }
  // measuredGlobal says whether the selected run measures global accuracy.
  function measuredGlobal() { var info = runs[selRun]; return !(info && info.global === false); }
  function sortVal(x, k) {
    if (k === "role") return x.byz ? 1 : 0;
    if (k === "reasons") return cell(x, k);
    var v = x[k];
    return typeof v === "number" && isFinite(v) ? v : -Infinity;
  }

  function renderNodes(f) {
    var t = $("nodes");
    t.tHead.innerHTML = "<tr>" + COLS.map(function (c) {
      return '<th data-key="' + c[0] + '"' + (c[2] ? ' class="l"' : "") + ">" + esc(c[1]) + (sortKey === c[0] ? (sortDir > 0 ? " ▲" : " ▼") : "") + "</th>";
    }).join("") + "</tr>";
    if (!f) { t.tBodies[0].innerHTML = ""; return; }
    var rows = f.nodes.slice().sort(function (a, b) {
      var va = sortVal(a, sortKey), vb = sortVal(b, sortKey);
      return (va < vb ? -1 : va > vb ? 1 : a.id - b.id) * sortDir;
    });
    t.tBodies[0].innerHTML = rows.map(function (x) {
      return '<tr data-node="' + x.id + '"' + (x.byz ? ' class="byz"' : "") + ">" + COLS.map(function (c) {
        return "<td" + (c[2] ? ' class="l"' : "") + ">" + esc(cell(x, c[0])) + "</td>";
      }).join("") + "</tr>";
    }).join("");
  }

  // ---- wiring ----------------------------------------------------------

  $("slider").addEventListener("input", function () {
    selRound = +this.value;
    var fs = roundsOf(selRun);
    follow = fs.length > 0 && selRound >= fs[fs.length - 1].round;
    $("follow").checked = follow;
    render();
  });
  $("follow").addEventListener("change", function () { follow = this.checked; render(); });
  $("axis").addEventListener("change", function () { xAxis = this.value; render(); });
  $("nodes").tHead.addEventListener("click", function (ev) {
    var th = ev.target.closest("th");
    if (!th) return;
    var k = th.getAttribute("data-key");
    if (sortKey === k) sortDir = -sortDir; else { sortKey = k; sortDir = 1; }
    render();
  });
  $("runs").tBodies[0].addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr");
    if (!tr) return;
    selRun = +tr.getAttribute("data-run");
    userPickedRun = true;
    follow = true;
    render();
  });
  window.trellisDashboard = { select: function (run, round) { if (run !== undefined) { selRun = run; userPickedRun = true; } if (round !== undefined) { selRound = round; follow = false; $("follow").checked = false; } render(); } };

  var conn = $("conn");
  // showConn says whether the page is live, lost, or showing runs that
  // will not change (model.js's connState).
  function showConn() {
    if (window.TRELLIS_EVENTS) return;
    var c = TM.connState(runs, ended, open);
    conn.textContent = c.text;
    conn.className = c.cls;
  }
  if (window.TRELLIS_EVENTS) {
    window.TRELLIS_EVENTS.forEach(ingest);
    userPickedRun = false;
    if (runs.length > 1) { selRun = 0; userPickedRun = true; }
    conn.textContent = "report: " + runs.length + " run(s), data inline";
    render();
  } else if (window.EventSource) {
    es = new EventSource("api/events");
    es.onopen = function () { open = true; showConn(); };
    es.onerror = function () { open = false; showConn(); };
    es.onmessage = function (m) {
      var ev;
      try { ev = JSON.parse(m.data); } catch (e) { report("bad event: " + e); return; }
      ingest(ev);
      schedule();
    };
  } else {
    conn.textContent = "this browser has no EventSource";
  }
})();
