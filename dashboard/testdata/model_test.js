// Tests of the page's model (assets/model.js), run by model_test.go with
// node: node testdata/model_test.js assets/model.js
"use strict";
var assert = require("assert");
var M = require(require("path").resolve(process.argv[2]));
var failed = 0;
function test(name, fn) {
  try { fn(); } catch (e) { failed++; console.log("FAIL " + name + ": " + e.message); }
}

// The byzantine-sweep preset: 3 rules × 3 fractions × 3 seeds, in the
// sweep's order (seed innermost).
function sweep27() {
  var runs = [];
  ["mean", "median", "trimmed_mean"].forEach(function (rule) {
    ["0", "0.2", "0.4"].forEach(function (fr) {
      [1, 2, 3].forEach(function (seed) {
        runs.push({ label: rule, seed: seed, status: "finished", params: { "adversary.fraction": fr, "strategy.rule": rule } });
      });
    });
  });
  return runs;
}

test("27 runs make 9 series of 3 seeds, every run in one", function () {
  var g = M.seriesGroups(sweep27());
  assert.strictEqual(g.length, 9);
  var seen = {};
  g.forEach(function (s, k) {
    assert.strictEqual(s.key, String(k + 1));
    assert.deepStrictEqual(s.seeds, [1, 2, 3]);
    s.runs.forEach(function (i) { assert.ok(!seen[i], "run " + i + " twice"); seen[i] = true; });
  });
  assert.strictEqual(Object.keys(seen).length, 27);
  assert.deepStrictEqual(g[4].runs, [12, 13, 14]);
  assert.strictEqual(g[4].params["adversary.fraction"], "0.2");
  assert.strictEqual(g[4].label, "median");
});

test("every series of the sweep differs in colour or dash; colour is the rule, dash the fraction", function () {
  var g = M.seriesGroups(sweep27());
  var styles = g.map(function (s) { return s.color + "/" + s.dash; });
  assert.strictEqual(new Set(styles).size, 9, styles.join(" "));
  assert.strictEqual(g[0].color, g[2].color);
  assert.notStrictEqual(g[0].color, g[3].color);
  assert.strictEqual(g[0].dash, g[3].dash);
  assert.notStrictEqual(g[0].dash, g[1].dash);
});

test("up to 40 series of one variant all differ in colour or dash", function () {
  var runs = [];
  for (var i = 0; i < 40; i++) runs.push({ label: "fedavg", seed: 1, params: { "data.samples": String(i) } });
  var g = M.seriesGroups(runs);
  var styles = g.map(function (s) { return s.color + "/" + s.dash; });
  assert.strictEqual(new Set(styles).size, 40);
});

test("mean over seeds and a min–max band, round by round", function () {
  var mb = M.meanBand([[[0, 0.5], [1, 0.75]], [[0, 0.25], [1, 0.25]], [[0, 0.75]]]);
  assert.deepStrictEqual(mb.pts, [[0, 0.5], [1, 0.5]]);
  assert.deepStrictEqual(mb.band, [[0, 0.25, 0.75], [1, 0.25, 0.75]]);
  // One seed: a line, no band; a non-finite value is left out.
  mb = M.meanBand([[[0, 0.5], [1, NaN]]]);
  assert.deepStrictEqual(mb.pts, [[0, 0.5]]);
  assert.deepStrictEqual(mb.band, []);
});

test("the slider's range is the rounds on hand, the label agrees with the knob", function () {
  var present = [];
  for (var r = 0; r <= 18; r++) present.push(r);
  var st = M.sliderState(present, -1, true, 300);
  assert.strictEqual(st.max, 18);
  assert.strictEqual(st.value, 18);
  assert.strictEqual(st.text, "18 of 0–18 (19 of 300 rounds run so far)");
  st = M.sliderState(present, 4, false, 300);
  assert.strictEqual(st.value, 4);
  assert.ok(st.text.indexOf("4 of 0–18") === 0, st.text);
  // A finished run: all its rounds, no "so far".
  present = [];
  for (r = 0; r < 300; r++) present.push(r);
  assert.strictEqual(M.sliderState(present, -1, true, 300).text, "299 of 0–299");
  // A live view that joined late: from its first round on hand.
  st = M.sliderState([5, 6, 7], 2, false, 10);
  assert.strictEqual(st.min, 5);
  assert.strictEqual(st.value, 5);
  assert.strictEqual(M.sliderState([], -1, true, 10).text, "–");
});

test("the badge: live while streaming, finished when ended, lost otherwise", function () {
  var done = [{ status: "finished" }, { status: "finished" }];
  assert.strictEqual(M.connState(done, null, true).text, "live");
  var st = M.connState(done, { type: "end", note: "read from disk" }, false);
  assert.strictEqual(st.text, "finished (all 2 runs) · read from disk");
  assert.strictEqual(st.cls, "conn done");
  assert.strictEqual(M.connState([{ status: "finished" }], { type: "end" }, false).text, "finished");
  assert.strictEqual(M.connState([{ status: "finished" }, { status: "interrupted" }], { type: "end" }, false).text, "ended: 1 finished, 1 interrupted");
  assert.strictEqual(M.connState(done, null, false).cls, "conn off");
  assert.strictEqual(M.connState([{ status: "finished", error: "metrics.jsonl line 3 …" }, { status: "finished" }], { type: "end" }, false).text,
    "finished (all 2 runs) · 1 run with errors (see the table)");
});

test("keys at line ends keep apart and inside the plot", function () {
  var at = M.spreadLabels([100, 101, 102, 50, 205], 12, 10, 210);
  var sorted = at.slice().sort(function (a, b) { return a - b; });
  for (var i = 1; i < sorted.length; i++) assert.ok(sorted[i] - sorted[i - 1] >= 12 - 1e-9, at.join(" "));
  at.forEach(function (y) { assert.ok(y >= 10 && y <= 210, at.join(" ")); });
  assert.strictEqual(at[3], 50);
  assert.ok(at[0] < at[1] && at[1] < at[2]);
});

test("short keys: last dotted part unless shared", function () {
  assert.deepStrictEqual(M.shortKeys(["adversary.fraction", "strategy.rule"]), ["fraction", "rule"]);
  assert.deepStrictEqual(M.shortKeys(["a.alpha", "b.alpha", "c"]), ["a.alpha", "b.alpha", "c"]);
});

test("x axes: rounds, or for an asynchronous run read from disk virtual time, steps, windows", function () {
  var fs = [{ round: 0, time: 2, steps: 0.5 }, { round: 1, time: 4, steps: 1.25 }];
  assert.deepStrictEqual(M.xAxes({}, fs).map(function (a) { return a.key; }), ["round"]);
  // Live frames: no steps, the time from the window.
  assert.deepStrictEqual(M.xAxes({ async: { window: 2 } }, [{ round: 0 }]).map(function (a) { return a.key; }), ["time", "round"]);
  assert.strictEqual(M.xOf({ round: 3 }, "time", { async: { window: 2 } }), 8);
  var ax = M.xAxes({ async: { window: 2, sync_round: 3 } }, fs);
  assert.deepStrictEqual(ax.map(function (a) { return a.key; }), ["time", "steps", "round"]);
  assert.strictEqual(ax[2].label, "window (of 2 s)");
  assert.deepStrictEqual(fs.map(function (f) { return M.xOf(f, "time"); }), [2, 4]);
  assert.deepStrictEqual(fs.map(function (f) { return M.xOf(f, "steps"); }), [0.5, 1.25]);
  assert.deepStrictEqual(fs.map(function (f) { return M.xOf(f, "round"); }), [0, 1]);
  assert.ok(isNaN(M.xOf({ round: 3 }, "time")));
});

if (failed) { console.log(failed + " failed"); process.exit(1); }
console.log("ok");
