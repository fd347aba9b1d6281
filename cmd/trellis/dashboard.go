package main

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/dashboard"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/metrics"
)

// dashFlag is the --dashboard ADDR flag of run and sweep.
type dashFlag struct{ addr string }

func (d *dashFlag) register(c *cobra.Command) {
	c.Flags().StringVar(&d.addr, "dashboard", "", "HOST:PORT: serve a live dashboard of the run in the browser (e.g. 127.0.0.1:8080; a non-loopback host exposes the run and is warned about)")
}

// start starts the dashboard, when asked for, and returns the sweep to
// give SweepOptions.Live (nil without a dashboard) and a function that
// records the sweep's end and stops the server.
func (d *dashFlag) start(o *options, cfg config.Config, out string, force bool) (func(int, config.SweepRun) metrics.Sink, func(*experiment.SweepResult), error) {
	return d.serve(o, cfg, out, func(srv *dashboard.Server, runs []config.SweepRun) *dashboard.Sweep {
		return srv.Plan(out, runs, force)
	})
}

// serve is start with the page's runs planned by plan.
func (d *dashFlag) serve(o *options, cfg config.Config, out string, plan func(*dashboard.Server, []config.SweepRun) *dashboard.Sweep) (func(int, config.SweepRun) metrics.Sink, func(*experiment.SweepResult), error) {
	if d.addr == "" {
		return nil, func(*experiment.SweepResult) {}, nil
	}
	runs, _, err := cfg.Expand()
	if err != nil {
		return nil, nil, err
	}
	l, url, err := listen(o, d.addr)
	if err != nil {
		return nil, nil, err
	}
	srv := dashboard.New("trellis: " + cfg.Name)
	sw := plan(srv, runs)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	fmt.Fprintf(o.stderr, "trellis: dashboard at %s\n", url)
	return sw.Live, func(res *experiment.SweepResult) {
		sw.Done(res)
		// The open pages learn that the runs are over (and stop
		// reconnecting) before the server stops.
		srv.End("")
		srv.Close()
		<-served
		fmt.Fprintf(o.stderr, "trellis: dashboard closed; `trellis serve %s` shows the finished runs\n", out)
	}, nil
}

// startRun is start for one run written by another driver (the
// cluster's monitor): the sink to give it (nil without a dashboard) and a
// function that records the run's end (its error) and stops the server.
func (d *dashFlag) startRun(o *options, cfg config.Config, out string) (metrics.Sink, func(error), error) {
	live, done, err := d.serve(o, cfg, out, func(srv *dashboard.Server, _ []config.SweepRun) *dashboard.Sweep { return srv.PlanDeployment(out, cfg) })
	if err != nil || live == nil {
		return nil, func(error) {}, err
	}
	return live(0, config.SweepRun{Config: cfg}), func(err error) {
		done(&experiment.SweepResult{Errs: []error{err}})
	}, nil
}

// listen binds the dashboard's address, printing the warning of a
// non-loopback one, and returns the listener and the page's URL (with,
// for every interface, a note saying so: dashboard.PageURL).
func listen(o *options, addr string) (net.Listener, string, error) {
	l, warning, err := dashboard.Listen(addr)
	if err != nil {
		return nil, "", err
	}
	if warning != "" {
		fmt.Fprintln(o.stderr, "trellis: warning:", warning)
	}
	url, note := dashboard.PageURL(l.Addr())
	if note != "" {
		url += " (" + note + ")"
	}
	return l, url, nil
}

func serveCmd(o *options) *cobra.Command {
	var addr string
	c := &cobra.Command{
		Use:   "serve RUNDIR...",
		Short: "show finished runs and sweeps in the browser: the dashboard's page over run directories",
		Long: `Show finished (or interrupted) runs and sweeps in the browser: the live
dashboard's page over run directories — accuracy, Byzantine weight, loss and
trust curves, the graph and the per-node table of each round, and for a sweep
one row per run with the comparison plot. Ctrl-C stops it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			title := "trellis: " + args[0]
			if len(args) > 1 {
				title = fmt.Sprintf("trellis: %d run directories", len(args))
			}
			srv := dashboard.New(title)
			n, err := srv.LoadDirs(args...)
			if err != nil {
				return err
			}
			// Runs on disk do not change: the page says so and does not
			// wait for more.
			srv.End("read from disk")
			for _, w := range srv.Warnings() {
				fmt.Fprintln(o.stderr, "trellis: warning:", w)
			}
			l, url, err := listen(o, addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(o.stderr, "trellis: %d runs at %s (Ctrl-C stops)\n", n, url)
			go func() {
				<-cmd.Context().Done()
				srv.Close()
			}()
			return srv.Serve(l)
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:8080", "HOST:PORT to serve on (a non-loopback host exposes the runs and is warned about)")
	return c
}

// writeReportHTML writes report.html next to results.md.
func writeReportHTML(o *options, dir string) error {
	p, err := dashboard.WriteReport(dir)
	if err != nil {
		return err
	}
	if !o.json {
		fmt.Fprintf(o.stdout, "self-contained HTML report: %s\n", p)
	}
	return nil
}
