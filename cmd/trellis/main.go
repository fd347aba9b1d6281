// Command trellis is the command line of the trellis framework. It holds
// flags and wiring only; the work is done by the library packages.
//
//	trellis demo [-nodes N] [-rounds R] [-byzantine F] [-sigma S] [-samples M] [-seed S]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

const usage = `trellis — decentralized, personalized federated learning that keeps working when some peers lie.

Usage:
  trellis demo [flags]    nodes learn the embedded MNIST together while some lie:
                          local-only, FedAvg and median side by side

Run 'trellis demo -h' for the demo's flags.
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "trellis:", err)
		}
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return nil
	}
	switch args[0] {
	case "demo":
		return demo(args[1:], stdout, stderr)
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
