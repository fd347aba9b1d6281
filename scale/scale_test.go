package scale

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/trellis-fl/trellis/cluster"
	"github.com/trellis-fl/trellis/experiment"
)

func TestQuote(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh on PATH")
	}
	for _, s := range []string{"plain/path.toml", "with space", "it's", `$HOME "x" \n`, "", "a;rm -rf b", "*"} {
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("sh read Quote(%q) = %s as %q (%v)", s, Quote(s), out, err)
		}
	}
}

func bashSyntax(t *testing.T, script string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash on PATH")
	}
	if out, err := exec.Command("bash", "-n", "-c", script).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s\n%s", err, out, script)
	}
}

func TestSlurmSweep(t *testing.T) {
	s := Slurm{Config: "/shared/my sweep's.toml", Out: "/shared/runs/x", Name: "x", Time: "01:00:00", Overcommit: true}
	sc, err := SlurmSweep(s, 4, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --array=0-3%2\n", "#SBATCH --time=01:00:00\n", "#SBATCH --overcommit\n",
		`CONFIG='/shared/my sweep'\''s.toml'`, `"$TRELLIS" sweep "$CONFIG" --shard auto`} {
		if !strings.Contains(sc, want) {
			t.Errorf("script lacks %q:\n%s", want, sc)
		}
	}
	bashSyntax(t, sc)
	if m := SlurmMerge(s); !strings.Contains(m, `'/shared/my sweep'\''s.toml' --merge`) {
		t.Errorf("merge command %s", m)
	}
	spaced, err := SlurmSweep(Slurm{Config: "c", Out: "/a b", Name: "x"}, 2, 0)
	if err != nil || strings.Contains(spaced, "#SBATCH --output") || !strings.Contains(spaced, `sbatch --output='/a b/slurm-%A_%a.out' SCRIPT`) {
		t.Errorf("an output directory with a space: %v\n%s", err, spaced)
	}
	bashSyntax(t, spaced)
	for _, bad := range []Slurm{{Config: "c", Out: "/a%b", Name: "x"}, {Config: "c", Out: "o", Name: "x y"}, {Out: "o", Name: "x"}} {
		if _, err := SlurmSweep(bad, 2, 0); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := SlurmSweep(s, 0, 0); err == nil {
		t.Error("0 shards: no error")
	}
}

func TestSlurmLaunch(t *testing.T) {
	sc, err := SlurmLaunch(Slurm{Config: "quickstart", Preset: true, Out: "/shared/runs/q", Name: "q"}, 20, 7000, Timing{Mode: "lockstep"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --ntasks=20\n", `"$TRELLIS" presets show "$CONFIG"`, `--id "$SLURM_PROCID"`,
		`"$TRELLIS" keys --nodes "$NODES"`, `"$TRELLIS" monitor`, "wait \"$MONITOR\""} {
		if !strings.Contains(sc, want) {
			t.Errorf("script lacks %q:\n%s", want, sc)
		}
	}
	bashSyntax(t, sc)
	wc, err := SlurmLaunch(Slurm{Config: "/c.toml", Out: "/o", Name: "q"}, 4, 7000, Timing{Mode: "wallclock", Delta: 5 * time.Second, Start: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NODE_ARGS=(--mode wallclock --delta 5s)", "MONITOR_ARGS=(--mode wallclock --gap 10s)", "NODE_ARGS+=(--epoch", "+ 30))"} {
		if !strings.Contains(wc, want) {
			t.Errorf("wall-clock script lacks %q:\n%s", want, wc)
		}
	}
	bashSyntax(t, wc)
	// The epoch line gives an RFC 3339 time bash and date agree on.
	if _, err := exec.LookPath("date"); err == nil {
		line := wc[strings.Index(wc, "NODE_ARGS+=("):]
		line = line[:strings.Index(line, "\n")]
		out, err := exec.Command("bash", "-c", "NODE_ARGS=(); "+line+`; printf %s "${NODE_ARGS[1]}"`).Output()
		if _, perr := time.Parse(time.RFC3339, string(out)); err != nil || perr != nil {
			t.Errorf("epoch %q: %v %v", out, err, perr)
		}
	}
	for _, bad := range []Timing{{Mode: "fast"}, {Mode: "wallclock"}} {
		if _, err := SlurmLaunch(Slurm{Config: "c", Out: "o", Name: "q"}, 4, 7000, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
	if _, err := SlurmLaunch(Slurm{Config: "c", Out: "o", Name: "q"}, 4, 65533, Timing{Mode: "lockstep"}); err == nil {
		t.Error("ports past 65535: no error")
	}
}

// The fields of the Kubernetes API objects the tests check (k8s.io/api's
// names and JSON keys; decoding is strict, so a misspelt key fails).
type (
	meta struct {
		Name      string            `json:"name"`
		Namespace string            `json:"namespace"`
		Labels    map[string]string `json:"labels"`
	}
	envVar struct {
		Name      string `json:"name"`
		Value     string `json:"value"`
		ValueFrom *struct {
			FieldRef struct {
				FieldPath string `json:"fieldPath"`
			} `json:"fieldRef"`
		} `json:"valueFrom"`
	}
	port struct {
		Name          string `json:"name"`
		Port          int    `json:"port"`
		TargetPort    int    `json:"targetPort"`
		ContainerPort int    `json:"containerPort"`
	}
	mount struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
		ReadOnly  bool   `json:"readOnly"`
	}
	container struct {
		Name         string   `json:"name"`
		Image        string   `json:"image"`
		Command      []string `json:"command"`
		Env          []envVar `json:"env"`
		Ports        []port   `json:"ports"`
		VolumeMounts []mount  `json:"volumeMounts"`
		Resources    struct {
			Requests map[string]string `json:"requests"`
		} `json:"resources"`
	}
	volume struct {
		Name      string `json:"name"`
		ConfigMap *struct {
			Name string `json:"name"`
		} `json:"configMap"`
		Secret *struct {
			SecretName  string `json:"secretName"`
			DefaultMode int    `json:"defaultMode"`
		} `json:"secret"`
		PersistentVolumeClaim *struct {
			ClaimName string `json:"claimName"`
		} `json:"persistentVolumeClaim"`
	}
	podSpec struct {
		RestartPolicy string      `json:"restartPolicy"`
		Hostname      string      `json:"hostname"`
		Subdomain     string      `json:"subdomain"`
		Containers    []container `json:"containers"`
		Volumes       []volume    `json:"volumes"`
	}
	object struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   meta              `json:"metadata"`
		Type       string            `json:"type"`
		Data       map[string]string `json:"data"`
		Spec       struct {
			// Job
			CompletionMode       string `json:"completionMode"`
			Completions          int    `json:"completions"`
			Parallelism          int    `json:"parallelism"`
			BackoffLimit         *int   `json:"backoffLimit"`
			BackoffLimitPerIndex *int   `json:"backoffLimitPerIndex"`
			Template             struct {
				Metadata meta    `json:"metadata"`
				Spec     podSpec `json:"spec"`
			} `json:"template"`
			// Service
			ClusterIP                string            `json:"clusterIP"`
			PublishNotReadyAddresses bool              `json:"publishNotReadyAddresses"`
			Selector                 map[string]string `json:"selector"`
			Ports                    []port            `json:"ports"`
		} `json:"spec"`
	}
)

func decode(t *testing.T, b []byte) map[string]object {
	t.Helper()
	var l struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Items      []object `json:"items"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil || l.Kind != "List" || l.APIVersion != "v1" {
		t.Fatalf("decode: %v (%s %s)", err, l.APIVersion, l.Kind)
	}
	out := map[string]object{}
	for _, o := range l.Items {
		out[o.Kind+"/"+o.Metadata.Name] = o
	}
	return out
}

func TestK8sSweep(t *testing.T) {
	k := K8s{Name: "bz", Namespace: "lab", Image: "registry.example/trellis:1", Claim: "runs", Config: []byte("name = \"bz\"\n"), CPU: "2", Memory: "4Gi"}
	b, err := K8sSweep(k, 12, 4)
	if err != nil {
		t.Fatal(err)
	}
	objs := decode(t, b)
	if cm := objs["ConfigMap/bz-config"]; cm.Data["config.toml"] != "name = \"bz\"\n" || cm.Metadata.Namespace != "lab" {
		t.Errorf("config map %+v", cm)
	}
	job, ok := objs["Job/bz-sweep"]
	if !ok {
		t.Fatalf("no Job bz-sweep in %v", objs)
	}
	if job.APIVersion != "batch/v1" || job.Spec.CompletionMode != "Indexed" || job.Spec.Completions != 12 || job.Spec.Parallelism != 4 {
		t.Errorf("job spec %+v", job.Spec)
	}
	c := job.Spec.Template.Spec.Containers[0]
	if strings.Join(c.Command, " ") != "trellis sweep /config/config.toml --shard auto --quiet -o /runs/bz" {
		t.Errorf("command %q", c.Command)
	}
	if len(c.Env) != 1 || c.Env[0].Name != experiment.EnvShardCount || c.Env[0].Value != "12" {
		t.Errorf("env %+v", c.Env)
	}
	if c.Resources.Requests["cpu"] != "2" || c.Resources.Requests["memory"] != "4Gi" || job.Spec.Template.Spec.RestartPolicy != "Never" {
		t.Errorf("resources %+v", c.Resources)
	}
	if v := job.Spec.Template.Spec.Volumes; len(v) != 2 || v[1].PersistentVolumeClaim.ClaimName != "runs" || v[0].ConfigMap.Name != "bz-config" {
		t.Errorf("volumes %+v", v)
	}
	for _, bad := range []K8s{{Name: "Bad_Name", Image: "i", Claim: "c", Config: []byte("x")}, {Name: "ok", Claim: "c", Config: []byte("x")}} {
		if _, err := K8sSweep(bad, 2, 0); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// TestK8sLaunch is acceptance item 2 of issue 19: the manifests of a
// 10-node deployed run decode, and their indices, DNS names, ports, env,
// peers file and keys agree.
func TestK8sLaunch(t *testing.T) {
	const n, p = 10, 7400
	k := K8s{Name: "ten", Image: "trellis:dev", Claim: "runs", Config: []byte("name = \"ten\"\nnodes = 10\n")}
	b, err := K8sLaunch(k, n, p, Timing{Mode: "lockstep"})
	if err != nil {
		t.Fatal(err)
	}
	objs := decode(t, b)
	for _, name := range []string{"ConfigMap/ten-config", "Secret/ten-keys", "Service/ten-nodes", "Service/ten-monitor", "Job/ten-nodes", "Job/ten-monitor"} {
		if _, ok := objs[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	svc, job := objs["Service/ten-nodes"], objs["Job/ten-nodes"]
	if svc.Spec.ClusterIP != "None" || !svc.Spec.PublishNotReadyAddresses || svc.Spec.Ports[0].Port != p {
		t.Errorf("headless service %+v", svc.Spec)
	}
	pod := job.Spec.Template
	for k, v := range svc.Spec.Selector {
		if pod.Metadata.Labels[k] != v {
			t.Errorf("the service's selector %s=%s does not select the node pods (%v)", k, v, pod.Metadata.Labels)
		}
	}
	if job.Spec.CompletionMode != "Indexed" || job.Spec.Completions != n || job.Spec.Parallelism != n || pod.Spec.Subdomain != "ten-nodes" {
		t.Errorf("node job %+v", job.Spec)
	}
	c := pod.Spec.Containers[0]
	if c.Env[0].Name != "NODE_ID" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("node id env %+v", c.Env)
	}
	cmd := strings.Join(c.Command, " ")
	if !strings.Contains(cmd, "node --id $(NODE_ID) --key /keys/node-$(NODE_ID).key --config /config/config.toml --peers /config/peers.toml --quiet --mode lockstep") {
		t.Errorf("node command %q", cmd)
	}
	if c.Ports[0].ContainerPort != p {
		t.Errorf("node port %+v", c.Ports)
	}
	// The peers file names each pod by its Indexed Job host name under the
	// headless service, and the monitor by its service.
	dir := t.TempDir()
	cm := objs["ConfigMap/ten-config"]
	if err := os.WriteFile(filepath.Join(dir, cluster.PeersFile), []byte(cm.Data[cluster.PeersFile]), 0o644); err != nil {
		t.Fatal(err)
	}
	peers, err := cluster.LoadPeers(filepath.Join(dir, cluster.PeersFile), n)
	if err != nil {
		t.Fatal(err)
	}
	if peers.Monitor != fmt.Sprintf("tcp://ten-monitor:%d", p) {
		t.Errorf("monitor endpoint %s", peers.Monitor)
	}
	for i, pe := range peers.Nodes {
		if want := fmt.Sprintf("tcp://ten-nodes-%d.ten-nodes:%d", i, p); pe.ID != i || pe.Endpoint != want {
			t.Errorf("peer %d: %+v, want %s", i, pe, want)
		}
	}
	var cfg map[string]any
	if _, err := toml.Decode(cm.Data["config.toml"], &cfg); err != nil || cfg["nodes"] != int64(n) {
		t.Errorf("config in the map: %v %v", cfg, err)
	}
	// Every node's key, and each matches its public key in the peers file.
	sec := objs["Secret/ten-keys"]
	for i := range n {
		name := experiment.NodeKeyFile(i)
		raw, err := base64.StdEncoding.DecodeString(sec.Data[name])
		var id int
		var seedHex string
		if _, serr := fmt.Sscanf(string(raw), "%d %s", &id, &seedHex); err != nil || serr != nil || id != i {
			t.Fatalf("key %s in the secret: %q (%v, %v)", name, raw, err, serr)
		}
		seed, err := hex.DecodeString(seedHex)
		if err != nil || len(seed) != ed25519.SeedSize {
			t.Fatalf("key %s: %v", name, err)
		}
		pub := ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey)
		if hex.EncodeToString(pub) != peers.Nodes[i].Key {
			t.Errorf("node %d: the secret's key is not the peers file's", i)
		}
	}
	if len(sec.Data) != n {
		t.Errorf("%d keys in the secret, want %d", len(sec.Data), n)
	}
	mon := objs["Job/ten-monitor"].Spec.Template.Spec
	if mon.Hostname != "ten-monitor" || !strings.Contains(strings.Join(mon.Containers[0].Command, " "), "monitor -o /runs/ten") {
		t.Errorf("monitor pod %+v", mon)
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
	wc := decode(t, b)
	if cmd := strings.Join(wc["Job/ten-nodes"].Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(cmd, "--mode wallclock --delta 10s --epoch 2026-12-01T18:00:00Z") {
		t.Errorf("wall-clock node command %q", cmd)
	}
	if cmd := strings.Join(wc["Job/ten-monitor"].Spec.Template.Spec.Containers[0].Command, " "); !strings.Contains(cmd, "--mode wallclock --gap 20s") {
		t.Errorf("wall-clock monitor command %q", cmd)
	}
}
