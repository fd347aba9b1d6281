package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// progress draws a one-line bar with ETA on a terminal, and nothing
// otherwise (or with --quiet).
type progress struct {
	w     io.Writer
	on    bool
	start time.Time
	last  time.Time
}

func newProgress(w io.Writer, quiet bool) *progress {
	on := false
	if f, ok := w.(*os.File); ok && !quiet {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progress{w: w, on: on, start: time.Now()}
}

func (p *progress) update(label string, done, total int) {
	if !p.on || total <= 0 {
		return
	}
	now := time.Now()
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	frac := float64(done) / float64(total)
	const width = 30
	fill := int(frac * width)
	eta := "?"
	if done > 0 {
		eta = (time.Duration(float64(now.Sub(p.start)) * (1 - frac) / frac)).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r[%s%s] %3.0f%% ETA %-8s %s\x1b[K", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), 100*frac, eta, label)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
