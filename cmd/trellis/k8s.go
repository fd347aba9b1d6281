package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/scale"
)

func k8sCmd(o *options) *cobra.Command {
	var k scale.K8s
	var file string
	c := &cobra.Command{
		Use:   "k8s",
		Short: "write Kubernetes manifests: an Indexed Job for a sweep, node and monitor Jobs with Services for a deployed run",
		Long: `Write Kubernetes manifests (a JSON v1 List) for ` + "`kubectl apply -f`" + `, on stdout or
into --file. The image must hold the trellis binary; the run or sweep directory is
written to /runs/NAME on the PersistentVolumeClaim --claim (ReadWriteMany for a
sweep's pods).`,
	}
	pf := c.PersistentFlags()
	pf.StringVar(&k.Image, "image", "", "the container image with the trellis binary (required)")
	pf.StringVar(&k.Trellis, "trellis", "", "the binary's path in the image (default: trellis on its PATH)")
	pf.StringVar(&k.Claim, "claim", "", "the PersistentVolumeClaim mounted at /runs (required)")
	pf.StringVar(&k.Name, "name", "", "the objects' name prefix (default: the config's name, as a DNS label)")
	pf.StringVar(&k.Namespace, "namespace", "", "the objects' namespace (default: kubectl's current one)")
	pf.StringVar(&k.CPU, "cpu", "", "each pod's CPU request (e.g. 1)")
	pf.StringVar(&k.Memory, "memory", "", "each pod's memory request (e.g. 2Gi; default: the run's memory estimate, `--dry-run`'s expected peak)")
	pf.StringVar(&file, "file", "", "write the manifests here (mode 0600: a run's hold its node keys) instead of stdout")
	prepare := func(arg string) (configArg, error) {
		ca, err := loadConfigArg(arg)
		if err != nil {
			return ca, err
		}
		if k.Image == "" || k.Claim == "" {
			return ca, errors.New("give the image with --image and the volume claim with --claim")
		}
		k.Config = ca.text
		if k.Name == "" {
			k.Name = scale.DNSName(ca.cfg.Name)
		}
		return ca, nil
	}
	emit := func(b []byte) error {
		if file == "" {
			_, err := o.stdout.Write(b)
			return err
		}
		if err := os.WriteFile(file, b, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(o.stderr, "wrote %s; apply with: kubectl apply -f %s\n", file, file)
		return nil
	}

	var shards, parallel int
	sweep := &cobra.Command{
		Use:   "sweep CONFIG|PRESET",
		Short: "an Indexed Job of sweep shards (pod i runs the runs k with k mod N = i) and the config as a ConfigMap",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ca, err := prepare(args[0])
			if err != nil {
				return err
			}
			if shards, err = ca.shards(shards); err != nil {
				return err
			}
			if k.Memory == "" {
				if k.Memory, err = scale.SweepMemoryRequest(ca.cfg); err != nil {
					return fmt.Errorf("memory estimate (give --memory to skip it): %w", err)
				}
			}
			b, err := scale.K8sSweep(k, shards, parallel)
			if err != nil {
				return err
			}
			return emit(b)
		},
	}
	sweep.Flags().IntVar(&shards, "shards", 0, "number of pods (completions; default: one per run)")
	sweep.Flags().IntVar(&parallel, "parallel", 0, "at most this many pods at once (default: all)")

	var port int
	var t scale.Timing
	var epoch string
	launch := &cobra.Command{
		Use:   "launch CONFIG|PRESET",
		Short: "a deployed run: node Indexed Job behind a headless Service, monitor Job, ConfigMap (config, peers) and Secret (keys)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ca, err := prepare(args[0])
			if err != nil {
				return err
			}
			if err := ca.single("k8s"); err != nil {
				return err
			}
			if k.Memory == "" {
				if k.Memory, err = scale.NodeMemoryRequest(ca.cfg); err != nil {
					return fmt.Errorf("memory estimate (give --memory to skip it): %w", err)
				}
			}
			k.MonitorMemory = scale.MonitorMemoryRequest(ca.cfg)
			if epoch != "" {
				if t.Epoch, err = time.Parse(time.RFC3339Nano, epoch); err != nil {
					return fmt.Errorf("--epoch: %w (want RFC 3339, e.g. 2026-12-01T16:00:00Z)", err)
				}
			}
			b, err := scale.K8sLaunch(k, ca.cfg.Nodes, port, t)
			if err != nil {
				return err
			}
			return emit(b)
		},
	}
	launch.Flags().IntVar(&port, "port", 7100, "the TCP port every node and the monitor listen on")
	launch.Flags().StringVar(&t.Mode, "mode", "lockstep", "lockstep or wallclock")
	launch.Flags().DurationVar(&t.Delta, "delta", 10*time.Second, "wallclock: the round length Δ")
	launch.Flags().StringVar(&epoch, "epoch", "", "wallclock: t0, the start of round 0 (RFC 3339), late enough for every pod to be running")
	c.AddCommand(sweep, launch)
	return c
}
