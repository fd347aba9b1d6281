package scale

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/wire"
)

// K8s are the settings of generated Kubernetes manifests.
type K8s struct {
	// Name prefixes every object (a DNS label: lower-case letters, digits
	// and -, at most 40 characters, so pod host names stay under 63).
	Name string
	// Namespace of the objects ("" : kubectl's current one).
	Namespace string
	// Image holds the trellis binary (on its PATH, or at Trellis).
	Image, Trellis string
	// Config is the experiment config's TOML, put in a ConfigMap.
	Config []byte
	// Claim is the PersistentVolumeClaim mounted at /runs, where the run
	// or sweep directory is written (ReadWriteMany for a sweep's pods).
	Claim string
	// CPU and Memory are each pod's resource requests (e.g. "1", "2Gi"):
	// the sweep's shards', the deployed run's nodes'. MonitorMemory is the
	// monitor's. The trellis k8s command fills the memory requests from
	// the run's memory estimate (MemoryRequest) unless given.
	CPU, Memory, MonitorMemory string
}

// MemoryRequest is a pod's memory request for an estimate: its expected
// peak resident set, rounded up to whole MiB (a Kubernetes quantity).
func MemoryRequest(e experiment.Estimate) string {
	const mi = 1 << 20
	return fmt.Sprintf("%dMi", (e.Peak+mi-1)/mi)
}

var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$`)

func (k K8s) check() error {
	if !dnsLabel.MatchString(k.Name) {
		return fmt.Errorf("name %q: want a DNS label of at most 40 characters (a-z, 0-9, -)", k.Name)
	}
	if k.Image == "" || k.Claim == "" || len(k.Config) == 0 {
		return fmt.Errorf("manifests need an image, a volume claim and the config")
	}
	return nil
}

func (k K8s) trellis() string {
	if k.Trellis == "" {
		return "trellis"
	}
	return k.Trellis
}

type obj = map[string]any

func (k K8s) meta(name string) obj {
	m := obj{"name": name, "labels": obj{"app.kubernetes.io/name": "trellis", "app.kubernetes.io/instance": k.Name}}
	if k.Namespace != "" {
		m["namespace"] = k.Namespace
	}
	return m
}

func (k K8s) resources() obj { return requests(k.CPU, k.Memory) }

func requests(cpu, memory string) obj {
	req := obj{}
	if cpu != "" {
		req["cpu"] = cpu
	}
	if memory != "" {
		req["memory"] = memory
	}
	return obj{"requests": req}
}

func list(items ...obj) ([]byte, error) {
	b, err := json.MarshalIndent(obj{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	return append(b, '\n'), err
}

func (k K8s) configMap(data map[string]string) obj {
	return obj{"apiVersion": "v1", "kind": "ConfigMap", "metadata": k.meta(k.Name + "-config"), "data": data}
}

func (k K8s) volumes(extra ...obj) []obj {
	v := []obj{
		{"name": "config", "configMap": obj{"name": k.Name + "-config"}},
		{"name": "runs", "persistentVolumeClaim": obj{"claimName": k.Claim}},
	}
	return append(v, extra...)
}

var mounts = []obj{{"name": "config", "mountPath": "/config", "readOnly": true}, {"name": "runs", "mountPath": "/runs"}}

// K8sSweep is the manifests of a sweep as an Indexed Job of shards pods
// (parallelism at once; 0: all): pod i runs `trellis sweep
// /config/config.toml --shard auto` with JOB_COMPLETION_INDEX = i and
// TRELLIS_SHARD_COUNT = shards, into /runs/NAME on the claim; then
// `trellis sweep CFG --merge -o /runs/NAME` (in any pod with the claim)
// assembles it. A JSON v1 List, for `kubectl apply -f`.
func K8sSweep(k K8s, shards, parallel int) ([]byte, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	if shards < 1 {
		return nil, fmt.Errorf("an Indexed Job of %d shards: want at least 1", shards)
	}
	if parallel <= 0 || parallel > shards {
		parallel = shards
	}
	job := obj{
		"apiVersion": "batch/v1", "kind": "Job", "metadata": k.meta(k.Name + "-sweep"),
		"spec": obj{
			"completionMode": "Indexed", "completions": shards, "parallelism": parallel, "backoffLimitPerIndex": 2,
			"template": obj{
				"metadata": obj{"labels": obj{"app.kubernetes.io/instance": k.Name}},
				"spec": obj{
					"restartPolicy": "Never",
					"containers": []obj{{
						"name": "shard", "image": k.Image,
						"command":      []string{k.trellis(), "sweep", "/config/config.toml", "--shard", "auto", "--quiet", "-o", "/runs/" + k.Name},
						"env":          []obj{{"name": experiment.EnvShardCount, "value": strconv.Itoa(shards)}},
						"volumeMounts": mounts, "resources": k.resources(),
					}},
					"volumes": k.volumes(),
				},
			},
		},
	}
	return list(k.configMap(map[string]string{"config.toml": string(k.Config)}), job)
}

// K8sLaunch is the manifests of a deployed run of nodes nodes: a headless
// Service NAME-nodes (stable names NAME-nodes-I.NAME-nodes, published
// before the pods are ready, since peers connect while starting), an
// Indexed Job NAME-nodes whose pod I runs `trellis node --id I` on port, a
// ConfigMap with the config and the peers file, a Secret with every node's
// key (fresh, from crypto/rand: the manifests are secret), and the monitor
// as a Job of its own behind the Service NAME-monitor, writing the run
// directory to /runs/NAME on the claim.
func K8sLaunch(k K8s, nodes, port int, t Timing) ([]byte, error) {
	if err := k.check(); err != nil {
		return nil, err
	}
	if nodes < 1 || port < 1 || port > 65535 {
		return nil, fmt.Errorf("%d nodes on port %d: want at least 1 node and a port in 1 … 65535", nodes, port)
	}
	if err := t.check(true); err != nil {
		return nil, err
	}
	nodesName, monName := k.Name+"-nodes", k.Name+"-monitor"
	p := &cluster.Peers{Monitor: fmt.Sprintf("tcp://%s:%d", monName, port)}
	for i := range nodes {
		p.Nodes = append(p.Nodes, cluster.Peer{ID: i, Endpoint: fmt.Sprintf("tcp://%s-%d.%s:%d", nodesName, i, nodesName, port)})
	}
	tmp, err := os.MkdirTemp("", "trellis-k8s-keys")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if err := cluster.WriteKeys(tmp, p, rand.Reader); err != nil {
		return nil, err
	}
	peers, err := os.ReadFile(filepath.Join(tmp, cluster.PeersFile))
	if err != nil {
		return nil, err
	}
	keys := map[string][]byte{}
	for i := range nodes {
		b, err := os.ReadFile(filepath.Join(tmp, wire.NodeKeyFile(i)))
		if err != nil {
			return nil, err
		}
		keys[wire.NodeKeyFile(i)] = b
	}
	// The monitor's key: its socket is encrypted (CURVE over TCP).
	if keys[cluster.MonitorKeyFile], err = os.ReadFile(filepath.Join(tmp, cluster.MonitorKeyFile)); err != nil {
		return nil, err
	}
	secret := obj{"apiVersion": "v1", "kind": "Secret", "metadata": k.meta(k.Name + "-keys"), "type": "Opaque", "data": keys}
	svc := func(name string, selector obj, headless bool) obj {
		spec := obj{"selector": selector, "ports": []obj{{"name": "zmtp", "port": port, "targetPort": port}}}
		if headless {
			spec["clusterIP"] = "None"
			spec["publishNotReadyAddresses"] = true
		}
		return obj{"apiVersion": "v1", "kind": "Service", "metadata": k.meta(name), "spec": spec}
	}
	nodeSel := obj{"app.kubernetes.io/instance": k.Name, "trellis/role": "node"}
	monSel := obj{"app.kubernetes.io/instance": k.Name, "trellis/role": "monitor"}
	job := func(name string, selector obj, count int, spec obj) obj {
		s := obj{"completions": count, "parallelism": count, "backoffLimit": 0,
			"template": obj{"metadata": obj{"labels": selector}, "spec": spec}}
		if count > 1 || name == nodesName {
			s["completionMode"] = "Indexed"
		}
		return obj{"apiVersion": "batch/v1", "kind": "Job", "metadata": k.meta(name), "spec": s}
	}
	cfg := []string{"--config", "/config/config.toml", "--peers", "/config/peers.toml", "--quiet"}
	nodeArgs := append(slices.Clone(cfg), t.nodeArgs()...)
	if t.Mode == "wallclock" {
		nodeArgs = append(nodeArgs, "--epoch", t.Epoch.UTC().Format(time.RFC3339Nano))
	}
	nodeSpec := obj{
		"restartPolicy": "Never", "subdomain": nodesName,
		"containers": []obj{{
			"name": "node", "image": k.Image,
			"command": append([]string{k.trellis(), "node", "--id", "$(NODE_ID)", "--key", "/keys/node-$(NODE_ID).key"}, nodeArgs...),
			"env": []obj{{"name": "NODE_ID", "valueFrom": obj{"fieldRef": obj{
				"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}},
			"ports":        []obj{{"name": "zmtp", "containerPort": port}},
			"volumeMounts": []obj{mounts[0], {"name": "keys", "mountPath": "/keys", "readOnly": true}},
			"resources":    k.resources(),
		}},
		"volumes": []obj{k.volumes()[0], {"name": "keys", "secret": obj{"secretName": k.Name + "-keys", "defaultMode": 0o400}}},
	}
	monSpec := obj{
		"restartPolicy": "Never",
		"containers": []obj{{
			"name": "monitor", "image": k.Image,
			"command": append(append([]string{k.trellis(), "monitor", "-o", "/runs/" + k.Name, "--key", "/keys/" + cluster.MonitorKeyFile},
				cfg...), t.monitorArgs()...),
			"ports":        []obj{{"name": "zmtp", "containerPort": port}},
			"volumeMounts": append(slices.Clone(mounts), obj{"name": "keys", "mountPath": "/keys", "readOnly": true}),
			"resources":    requests("", k.MonitorMemory),
		}},
		"volumes": append(k.volumes(), obj{"name": "keys", "secret": obj{"secretName": k.Name + "-keys", "defaultMode": 0o400}}),
	}
	// The monitor binds its endpoint's host name: its Service's.
	monSpec["hostname"], monSpec["subdomain"] = monName, monName
	return list(
		k.configMap(map[string]string{"config.toml": string(k.Config), cluster.PeersFile: string(peers)}),
		secret,
		svc(nodesName, nodeSel, true),
		svc(monName, monSel, true),
		job(monName, monSel, 1, monSpec),
		job(nodesName, nodeSel, nodes, nodeSpec),
	)
}
