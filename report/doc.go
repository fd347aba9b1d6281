// Package report turns experiment results into tables and plots: a
// Markdown table and a CSV summary of final metrics, a metric-vs-round plot
// and a final-metric-vs-swept-value plot, each as PNG and SVG.
//
// It knows nothing of the simulator: its input is RunResult, one run's
// label, swept parameters, seed, per-round curves and final metrics, which
// the experiment package fills in. Demo is `trellis demo`'s runs and
// their narrative: the configs of its strategies side by side, the table
// of rounds, and a sentence per strategy on how it fared against
// local-only training (the caller runs the configs).
//
// Choices recorded here:
//   - "± std" is the sample standard deviation over seeds (denominator
//     n−1): with the 2–5 seeds of a typical sweep the population formula
//     understates the spread. With one seed there is no std: plots draw no
//     band or error bar, the table prints the mean alone.
//   - Means and stds are computed over runs sorted by seed and summed in
//     that order, so the output does not depend on the order of the input
//     runs. A non-finite value makes its mean non-finite: tables print it
//     as NaN/Inf, plots leave that point out (gonum/plot cannot draw it).
//   - Labels, parameter values and column keys are sorted with
//     CompareValues: numerically when both values parse as numbers, as
//     strings otherwise. Nothing iterates a map where order matters, so the
//     same input gives byte-identical files.
//   - Two runs with the same label, parameters and seed are an error (the
//     same run twice). A plot of one metric against round or against one
//     swept key refuses runs that differ in another parameter with the
//     same label and seed: the caller filters to one sweep point (Filter).
//   - Every file is written atomically (rundir.WriteAtomicFunc): a
//     temporary file in the target's directory, synced, then renamed over
//     the target, so an interrupted run leaves either the old file or the
//     new one (the directory itself is not synced).
//   - Series colours are a fixed palette (Tableau 10) indexed by the
//     label's rank, so a label keeps its colour across the plots of one
//     sweep; past ten labels the lines turn dashed, then dotted.
//   - The legend sits in a column right of the axes (Chart), not inside
//     them: with every strategy of a demo it would otherwise hide curves.
//   - The ± std band of a curve is drawn under every mean line; a sweep
//     plot's x ticks are the swept values themselves (up to 12).
package report
