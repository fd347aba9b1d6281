package main

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/experiment"
)

// validateCmd checks a config, every run of its sweep included, without
// running anything: what `run` would refuse, it refuses, and it prints the
// warnings.
func validateCmd(o *options) *cobra.Command {
	var sets []string
	c := &cobra.Command{
		Use:   "validate CONFIG|PRESET",
		Short: "check a config and every run of its sweep without running anything",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfigOrPreset(args[0], sets)
			if err != nil {
				return err
			}
			runs, _, err := cfg.Expand()
			if err != nil {
				return err
			}
			for _, r := range runs {
				if err := experiment.Check(r.Config); err != nil {
					return fmt.Errorf("run %s: %w", r.Dir, err)
				}
			}
			var warnings []string
			for _, r := range runs {
				for _, w := range experiment.Warnings(r.Config) {
					warnings = append(warnings, r.Dir+": "+w)
				}
			}
			if o.json {
				return jsonOut(o.stdout, map[string]any{"valid": true, "runs": len(runs), "warnings": warnings})
			}
			for _, w := range warnings {
				fmt.Fprintln(o.stderr, "trellis: warning:", w)
			}
			fmt.Fprintf(o.stdout, "%s: valid, %d run(s)\n", args[0], len(runs))
			return nil
		},
	}
	c.Flags().StringArrayVar(&sets, "set", nil, "KEY=VALUE: override one config key (repeatable)")
	return c
}

// version is the module version and VCS revision of the binary.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = ", modified"
			}
		}
	}
	if rev == "" {
		return fmt.Sprintf("%s %s, %s", bi.Main.Path, v, bi.GoVersion)
	}
	return fmt.Sprintf("%s %s (commit %s%s), %s", bi.Main.Path, v, rev, modified, bi.GoVersion)
}
