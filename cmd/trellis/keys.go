package main

import (
	"crypto/rand"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/trellis-fl/trellis/cluster"
)

func keysCmd(o *options) *cobra.Command {
	var nodes int
	var endpoints []string
	var monitor, sockDir string
	cmd := &cobra.Command{
		Use:   "keys --nodes N (--endpoint EP … | --ipc DIR) --monitor EP -o DIR",
		Short: "write per-node key files and the peers file (endpoints and public keys) of a deployment",
		Long: `Write a deployment's keys into DIR: node-I.key (node I's Ed25519 private key, readable
by its owner only; copy it to that node's machine), monitor.key (the monitor's, for its
encrypted socket: trellis monitor --key), directory.keys, and peers.toml, which lists the
monitor's endpoint and public key and every node's endpoint and public key (give every
process the same peers.toml). Links over TCP are encrypted with CURVE, each node's key
carried over from its Ed25519 key. Endpoints are tcp://HOST:PORT or ipc://PATH:
--endpoint once per node in id order, or --ipc DIR for Unix sockets in DIR.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.out == "" {
				return fmt.Errorf("give the output directory with -o")
			}
			if _, err := o.outDir(""); err != nil {
				return err
			}
			if nodes < 2 {
				return fmt.Errorf("--nodes %d: a deployment needs at least 2 nodes (nodes learn from their peers); give the number of node processes", nodes)
			}
			var p *cluster.Peers
			switch {
			case sockDir != "":
				p = cluster.IPCEndpoints(sockDir, nodes)
			case len(endpoints) == nodes:
				p = &cluster.Peers{}
				for i, ep := range endpoints {
					p.Nodes = append(p.Nodes, cluster.Peer{ID: i, Endpoint: ep})
				}
			default:
				return fmt.Errorf("%d --endpoint flags for %d nodes: give one per node, in id order, or --ipc DIR", len(endpoints), nodes)
			}
			if monitor != "" {
				p.Monitor = monitor
			}
			if p.Monitor == "" {
				return fmt.Errorf("give the monitor's endpoint with --monitor")
			}
			if err := cluster.ValidatePeers(p, nodes); err != nil {
				return err
			}
			if err := cluster.WriteKeys(o.out, p, rand.Reader); err != nil {
				return err
			}
			fmt.Fprintf(o.stdout, "wrote %d key files and %s\n", nodes, filepath.Join(o.out, cluster.PeersFile))
			return nil
		},
	}
	cmd.Flags().IntVar(&nodes, "nodes", 0, "number of nodes")
	cmd.Flags().StringArrayVar(&endpoints, "endpoint", nil, "a node's endpoint (once per node, in id order)")
	cmd.Flags().StringVar(&sockDir, "ipc", "", "put every node's and the monitor's Unix socket in this directory")
	cmd.Flags().StringVar(&monitor, "monitor", "", "the monitor's endpoint (default with --ipc: DIR/monitor.sock)")
	_ = cmd.MarkFlagRequired("nodes")
	return cmd
}
