package scale

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/config"
	"github.com/trellis-fl/trellis/experiment"
	"github.com/trellis-fl/trellis/wire"
)

// manifests are the objects of a generated v1 List, decoded strictly into
// the official Kubernetes API types (k8s.io/api): a field the API does not
// have, or a value of the wrong type, fails the test.
type manifests struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
	services   map[string]*corev1.Service
	jobs       map[string]*batchv1.Job
}

func decodeList(t *testing.T, b []byte) manifests {
	t.Helper()
	var list struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := yaml.UnmarshalStrict(b, &list); err != nil || list.APIVersion != "v1" || list.Kind != "List" {
		t.Fatalf("list: %v (%s %s)", err, list.APIVersion, list.Kind)
	}
	m := manifests{map[string]*corev1.ConfigMap{}, map[string]*corev1.Secret{}, map[string]*corev1.Service{}, map[string]*batchv1.Job{}}
	for i, raw := range list.Items {
		var head struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			t.Fatalf("item %d: %v", i, err)
		}
		strict := func(v any) {
			if err := yaml.UnmarshalStrict(raw, v); err != nil {
				t.Fatalf("item %d (%s %s): %v", i, head.APIVersion, head.Kind, err)
			}
		}
		name := func(o interface{ GetName() string }) string {
			n := o.GetName()
			if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
				t.Errorf("%s %q: %v", head.Kind, n, errs)
			}
			return n
		}
		switch head.APIVersion + " " + head.Kind {
		case "v1 ConfigMap":
			o := new(corev1.ConfigMap)
			strict(o)
			m.configMaps[name(o)] = o
		case "v1 Secret":
			o := new(corev1.Secret)
			strict(o)
			m.secrets[name(o)] = o
		case "v1 Service":
			o := new(corev1.Service)
			strict(o)
			m.services[name(o)] = o
		case "batch/v1 Job":
			o := new(batchv1.Job)
			strict(o)
			m.jobs[name(o)] = o
		default:
			t.Fatalf("item %d: unexpected %s %s", i, head.APIVersion, head.Kind)
		}
	}
	return m
}

// The strict decoding refuses what the API does not have.
func TestDecodeListIsStrict(t *testing.T) {
	for _, bad := range []string{
		`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "datta": {}}`,
		`{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}, "spec": {"completions": "ten"}}`,
		`{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x"}, "spec": {"template": {"spec": {"containers": [{"name": "c", "comand": ["x"]}]}}}}`,
	} {
		var job batchv1.Job
		var cm corev1.ConfigMap
		var err error
		if strings.Contains(bad, "ConfigMap") {
			err = yaml.UnmarshalStrict([]byte(bad), &cm)
		} else {
			err = yaml.UnmarshalStrict([]byte(bad), &job)
		}
		if err == nil {
			t.Errorf("%s: decoded", bad)
		}
	}
}

func ptrValue[T any](p *T) (T, bool) {
	var zero T
	if p == nil {
		return zero, false
	}
	return *p, true
}

func TestK8sSweep(t *testing.T) {
	k := K8s{Name: "bz", Namespace: "lab", Image: "registry.example/trellis:1", Claim: "runs", Config: []byte("name = \"bz\"\n"), CPU: "2", Memory: "4Gi"}
	b, err := K8sSweep(k, 12, 4)
	if err != nil {
		t.Fatal(err)
	}
	m := decodeList(t, b)
	if cm := m.configMaps["bz-config"]; cm == nil || cm.Data["config.toml"] != "name = \"bz\"\n" || cm.Namespace != "lab" {
		t.Errorf("config map %+v", cm)
	}
	job := m.jobs["bz-sweep"]
	if job == nil {
		t.Fatalf("no Job bz-sweep in %v", m.jobs)
	}
	mode, _ := ptrValue(job.Spec.CompletionMode)
	completions, _ := ptrValue(job.Spec.Completions)
	parallelism, _ := ptrValue(job.Spec.Parallelism)
	perIndex, _ := ptrValue(job.Spec.BackoffLimitPerIndex)
	if mode != batchv1.IndexedCompletion || completions != 12 || parallelism != 4 || perIndex != 2 || job.Namespace != "lab" {
		t.Errorf("job spec %+v", job.Spec)
	}
	pod := job.Spec.Template.Spec
	c := pod.Containers[0]
	if strings.Join(c.Command, " ") != "trellis sweep /config/config.toml --shard auto --quiet -o /runs/bz" || c.Image != k.Image {
		t.Errorf("command %q image %q", c.Command, c.Image)
	}
	if len(c.Env) != 1 || c.Env[0].Name != experiment.EnvShardCount || c.Env[0].Value != "12" {
		t.Errorf("env %+v", c.Env)
	}
	if c.Resources.Requests.Cpu().String() != "2" || c.Resources.Requests.Memory().String() != "4Gi" || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("resources %+v", c.Resources)
	}
	if v := pod.Volumes; len(v) != 2 || v[1].PersistentVolumeClaim == nil || v[1].PersistentVolumeClaim.ClaimName != "runs" ||
		v[0].ConfigMap == nil || v[0].ConfigMap.Name != "bz-config" {
		t.Errorf("volumes %+v", v)
	}
	mounts := map[string]string{}
	for _, vm := range c.VolumeMounts {
		mounts[vm.Name] = vm.MountPath
	}
	if mounts["config"] != "/config" || mounts["runs"] != "/runs" {
		t.Errorf("mounts %+v", c.VolumeMounts)
	}
	for _, bad := range []K8s{{Name: "Bad_Name", Image: "i", Claim: "c", Config: []byte("x")}, {Name: "ok", Claim: "c", Config: []byte("x")}} {
		if _, err := K8sSweep(bad, 2, 0); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestK8sLaunch: the manifests of a
// 10-node deployed run decode strictly into the official types, and their
// indices, DNS names, ports, env, volumes, peers file, keys and resource
// requests (from the memory estimate) agree.
func TestK8sLaunch(t *testing.T) {
	const n, p = 10, 7400
	cfgText := "name = \"ten\"\nnodes = 10\n[topology]\nkind = \"kregular\"\nk = 4\n"
	cfg, err := config.Parse([]byte(cfgText), "ten")
	if err != nil {
		t.Fatal(err)
	}
	shape, _ := experiment.KnownShape(cfg)
	nodeEst, err := experiment.EstimateNodeProcess(cfg, shape)
	if err != nil {
		t.Fatal(err)
	}
	monEst := experiment.EstimateMonitor(cfg)
	k := K8s{Name: "ten", Image: "trellis:dev", Claim: "runs", Config: []byte(cfgText),
		Memory: MemoryRequest(nodeEst), MonitorMemory: MemoryRequest(monEst)}
	b, err := K8sLaunch(k, n, p, Timing{Mode: "lockstep"})
	if err != nil {
		t.Fatal(err)
	}
	m := decodeList(t, b)
	cm, sec, svc, mSvc, job, mJob := m.configMaps["ten-config"], m.secrets["ten-keys"], m.services["ten-nodes"],
		m.services["ten-monitor"], m.jobs["ten-nodes"], m.jobs["ten-monitor"]
	if cm == nil || sec == nil || svc == nil || mSvc == nil || job == nil || mJob == nil {
		t.Fatalf("objects: %v %v %v %v", m.configMaps, m.secrets, m.services, m.jobs)
	}

	// The headless Service gives every node pod a stable name before it
	// is ready (peers connect while starting).
	if svc.Spec.ClusterIP != corev1.ClusterIPNone || !svc.Spec.PublishNotReadyAddresses || len(svc.Spec.Ports) != 1 ||
		svc.Spec.Ports[0].Port != p || svc.Spec.Ports[0].TargetPort.IntValue() != p {
		t.Errorf("headless service %+v", svc.Spec)
	}
	pod := job.Spec.Template
	for key, v := range svc.Spec.Selector {
		if pod.Labels[key] != v {
			t.Errorf("the service's selector %s=%s does not select the node pods (%v)", key, v, pod.Labels)
		}
	}
	for key, v := range mSvc.Spec.Selector {
		if pod.Labels[key] == v && key == "trellis/role" {
			t.Errorf("the monitor's service selects the node pods")
		}
		if mJob.Spec.Template.Labels[key] != v {
			t.Errorf("the monitor's service does not select its pod: %s=%s (%v)", key, v, mJob.Spec.Template.Labels)
		}
	}

	// One pod per node: an Indexed Job whose index is the node id.
	mode, _ := ptrValue(job.Spec.CompletionMode)
	completions, _ := ptrValue(job.Spec.Completions)
	parallelism, _ := ptrValue(job.Spec.Parallelism)
	backoff, _ := ptrValue(job.Spec.BackoffLimit)
	if mode != batchv1.IndexedCompletion || completions != n || parallelism != n || backoff != 0 ||
		pod.Spec.Subdomain != svc.Name || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("node job %+v", job.Spec)
	}
	c := pod.Spec.Containers[0]
	if len(c.Env) != 1 || c.Env[0].Name != "NODE_ID" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef == nil ||
		c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['"+batchv1.JobCompletionIndexAnnotation+"']" {
		t.Errorf("the node id is not the completion index: %+v", c.Env)
	}
	cmd := strings.Join(c.Command, " ")
	if !strings.Contains(cmd, "node --id $(NODE_ID) --key /keys/node-$(NODE_ID).key --config /config/config.toml --peers /config/peers.toml --quiet --mode lockstep") {
		t.Errorf("node command %q", cmd)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != p || c.Ports[0].Name != svc.Spec.Ports[0].Name {
		t.Errorf("node port %+v", c.Ports)
	}
	// Resource requests: the node process's and the monitor's memory
	// estimates, rounded up to MiB.
	if q := c.Resources.Requests.Memory(); q.Value() < nodeEst.Peak || q.Value() > nodeEst.Peak+1<<20 {
		t.Errorf("node memory request %s, estimate %d", q, nodeEst.Peak)
	}
	if q := mJob.Spec.Template.Spec.Containers[0].Resources.Requests.Memory(); q.Value() < monEst.Peak || q.Cmp(resource.MustParse(k.MonitorMemory)) != 0 {
		t.Errorf("monitor memory request %s, estimate %d", q, monEst.Peak)
	}
	vols := map[string]corev1.Volume{}
	for _, v := range pod.Spec.Volumes {
		vols[v.Name] = v
	}
	if v := vols["keys"]; v.Secret == nil || v.Secret.SecretName != sec.Name || v.Secret.DefaultMode == nil || *v.Secret.DefaultMode != 0o400 {
		t.Errorf("keys volume %+v", v)
	}
	if v := vols["config"]; v.ConfigMap == nil || v.ConfigMap.Name != cm.Name {
		t.Errorf("config volume %+v", v)
	}

	// The peers file names each node by its pod's DNS name,
	// <job>-<index>.<service> (an Indexed Job's pod host name is
	// <job>-<index>; under subdomain <service> it resolves), and the
	// monitor by its Service.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, cluster.PeersFile), []byte(cm.Data[cluster.PeersFile]), 0o644); err != nil {
		t.Fatal(err)
	}
	peers, err := cluster.LoadPeers(filepath.Join(dir, cluster.PeersFile), n)
	if err != nil {
		t.Fatal(err)
	}
	if peers.Monitor != fmt.Sprintf("tcp://%s:%d", mSvc.Name, p) {
		t.Errorf("monitor endpoint %s", peers.Monitor)
	}
	for i, pe := range peers.Nodes {
		host := fmt.Sprintf("%s-%d", job.Name, i)
		if errs := validation.IsDNS1123Label(host); len(errs) > 0 {
			t.Errorf("pod host name %q: %v", host, errs)
		}
		if want := fmt.Sprintf("tcp://%s.%s:%d", host, svc.Name, p); pe.ID != i || pe.Endpoint != want {
			t.Errorf("peer %d: %+v, want %s", i, pe, want)
		}
	}
	if got, err := config.Parse([]byte(cm.Data["config.toml"]), "config map"); err != nil || got.Nodes != n {
		t.Errorf("the config map's config: %v, %d nodes", err, got.Nodes)
	}
	// Every node's key, each matching its public key in the peers file,
	// and the monitor's (its socket is encrypted), matching monitor_key.
	if len(sec.Data) != n+1 || sec.Type != corev1.SecretTypeOpaque {
		t.Errorf("%d keys in a %s secret, want %d", len(sec.Data), sec.Type, n+1)
	}
	monKey := filepath.Join(t.TempDir(), cluster.MonitorKeyFile)
	if err := os.WriteFile(monKey, sec.Data[cluster.MonitorKeyFile], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.ReadMonitorKey(monKey, peers); err != nil {
		t.Errorf("the secret's monitor key: %v", err)
	}
	for i := range n {
		name := wire.NodeKeyFile(i)
		var id int
		var seedHex string
		if _, err := fmt.Sscanf(string(sec.Data[name]), "%d %s", &id, &seedHex); err != nil || id != i {
			t.Fatalf("key %s in the secret: %q (%v)", name, sec.Data[name], err)
		}
		seed, err := hex.DecodeString(seedHex)
		if err != nil || len(seed) != ed25519.SeedSize {
			t.Fatalf("key %s: %v", name, err)
		}
		if pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey); hex.EncodeToString(pub) != peers.Nodes[i].Key {
			t.Errorf("node %d: the secret's key is not the peers file's", i)
		}
		if !strings.Contains(cmd, "/keys/node-$(NODE_ID).key") || name != fmt.Sprintf("node-%d.key", i) {
			t.Errorf("node %d reads /keys/node-$(NODE_ID).key, the secret holds %s", i, name)
		}
	}

	// The monitor: its own Job (one pod) behind its Service, with the run
	// directory's volume.
	mon := mJob.Spec.Template.Spec
	if mon.Hostname != mSvc.Name || mon.Subdomain != mSvc.Name || !strings.Contains(strings.Join(mon.Containers[0].Command, " "), "monitor -o /runs/ten") {
		t.Errorf("monitor pod %+v", mon)
	}
	var claim string
	for _, v := range mon.Volumes {
		if v.PersistentVolumeClaim != nil {
			claim = v.PersistentVolumeClaim.ClaimName
		}
	}
	if !strings.Contains(strings.Join(mon.Containers[0].Command, " "), "--key /keys/"+cluster.MonitorKeyFile) ||
		!slices.ContainsFunc(mon.Containers[0].VolumeMounts, func(vm corev1.VolumeMount) bool { return vm.MountPath == "/keys" && vm.ReadOnly }) {
		t.Errorf("the monitor does not read its key from the secret: %q, %+v", mon.Containers[0].Command, mon.Containers[0].VolumeMounts)
	}
	if claim != "runs" || !slices.ContainsFunc(mon.Containers[0].VolumeMounts, func(vm corev1.VolumeMount) bool { return vm.MountPath == "/runs" && !vm.ReadOnly }) {
		t.Errorf("the monitor writes no run directory: %+v %+v", mon.Volumes, mon.Containers[0].VolumeMounts)
	}
	if mc, _ := ptrValue(mJob.Spec.Completions); mc != 1 || len(mon.Containers[0].Ports) != 1 || mon.Containers[0].Ports[0].ContainerPort != p {
		t.Errorf("monitor job %+v", mJob.Spec)
	}

	for _, bad := range []Timing{{Mode: "fast"}, {Mode: "wallclock", Delta: time.Second}} {
		if _, err := K8sLaunch(k, n, p, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	epoch := time.Date(2026, 12, 1, 18, 0, 0, 0, time.UTC)
	b, err = K8sLaunch(k, n, p, Timing{Mode: "wallclock", Delta: 10 * time.Second, Epoch: epoch})
	if err != nil {
		t.Fatal(err)
	}
	wc := decodeList(t, b)
	if cmd := strings.Join(wc.jobs["ten-nodes"].Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(cmd, "--mode wallclock --delta 10s --epoch 2026-12-01T18:00:00Z") {
		t.Errorf("wall-clock node command %q", cmd)
	}
	if cmd := strings.Join(wc.jobs["ten-monitor"].Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(cmd, "--mode wallclock --gap 20s") {
		t.Errorf("wall-clock monitor command %q", cmd)
	}
	var cfgMap map[string]any
	if _, err := toml.Decode(cm.Data["config.toml"], &cfgMap); err != nil {
		t.Error(err)
	}
}
