package deploy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// manifests reads every YAML document under deploy/kubernetes, by kind.
func manifests(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	more, _ := filepath.Glob(filepath.Join("kubernetes", "*", "*.yaml"))
	byKind := map[string]map[string]any{}
	for _, f := range append(files, more...) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(src))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			kind, _ := doc["kind"].(string)
			if kind == "" || byKind[kind] != nil {
				t.Fatalf("%s: a document without a kind, or a second %q", f, kind)
			}
			byKind[kind] = doc
		}
	}
	return byKind
}

// at walks a decoded YAML tree by map keys and list indexes; nil where the path is absent.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string { s, _ := at(v, path...).(string); return s }

// The manifests hold together: kustomization lists the files, the selectors select the pods,
// the probes are on paths sluice serves and the port it listens on, the grace period lets a
// graceful stop finish, --instance is the pod's name, and the autoscaler looks at the group
// and topic the pipeline reads.
func TestKubernetesManifests(t *testing.T) {
	m := manifests(t)
	for _, kind := range []string{"Kustomization", "ConfigMap", "Service", "StatefulSet", "PodDisruptionBudget", "ScaledObject"} {
		if m[kind] == nil {
			t.Fatalf("deploy/kubernetes has no %s", kind)
		}
	}
	for _, r := range at(m["Kustomization"], "resources").([]any) {
		if _, err := os.Stat(filepath.Join("kubernetes", r.(string))); err != nil {
			t.Errorf("kustomization.yaml lists %s: %v", r, err)
		}
	}
	sts, pod := m["StatefulSet"], at(m["StatefulSet"], "spec", "template")
	labels := at(pod, "metadata", "labels").(map[string]any)
	for kind, sel := range map[string]any{
		"StatefulSet": at(sts, "spec", "selector", "matchLabels"), "PodDisruptionBudget": at(m["PodDisruptionBudget"], "spec", "selector", "matchLabels"),
		"Service": at(m["Service"], "spec", "selector"),
	} {
		for k, v := range sel.(map[string]any) {
			if labels[k] != v {
				t.Errorf("the %s selects %s=%v, which the StatefulSet's pods are not labelled with", kind, k, v)
			}
		}
	}
	if str(sts, "spec", "serviceName") != str(m["Service"], "metadata", "name") || str(m["Service"], "spec", "clusterIP") != "None" {
		t.Errorf("the StatefulSet's serviceName %q is not the headless Service", str(sts, "spec", "serviceName"))
	}

	c := at(pod, "spec", "containers", 0)
	args := toStrings(at(c, "args"))
	if len(args) < 2 || args[0] != "run" || strings.HasPrefix(args[1], "-") {
		t.Fatalf("the container's args %q are not sluice run PIPELINE.yaml --flag=value...", args)
	}
	flags := map[string]string{} // --name=value, or --name for a boolean
	for _, a := range args[2:] {
		name, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") {
			t.Errorf("the container's argument %q: write flags as --name=value", a)
		}
		flags[name] = value
	}
	if flags["instance"] != "$(POD_NAME)" || str(c, "env", 0, "name") != "POD_NAME" || str(c, "env", 0, "valueFrom", "fieldRef", "fieldPath") != "metadata.name" {
		t.Errorf("--instance is %q, env %v: want the pod's name (POD_NAME from metadata.name)", flags["instance"], at(c, "env"))
	}
	_, port, _ := strings.Cut(flags["http-addr"], ":")
	if p, _ := at(c, "ports", 0, "containerPort").(int); port == "" || port != strconv.Itoa(p) {
		t.Errorf("--http-addr %q and the container port %d differ", flags["http-addr"], p)
	}
	serve, err := os.ReadFile(filepath.Join(root, "cmd", "sluice", "serve.go"))
	if err != nil {
		t.Fatal(err)
	}
	for probe, want := range map[string]string{"livenessProbe": "/healthz", "readinessProbe": "/readyz"} {
		path := str(c, probe, "httpGet", "path")
		if path != want || !strings.Contains(string(serve), `"GET `+path+`"`) {
			t.Errorf("%s on %q: want %s, a path sluice run --http-addr serves (cmd/sluice/serve.go)", probe, path, want)
		}
		if str(c, probe, "httpGet", "port") != str(c, "ports", 0, "name") {
			t.Errorf("%s is on port %v, not the container's port %q", probe, at(c, probe, "httpGet", "port"), str(c, "ports", 0, "name"))
		}
	}
	if uid, _ := at(pod, "spec", "securityContext", "runAsUser").(int); uid != imageUID {
		t.Errorf("runAsUser %d, want the image's user %d", uid, imageUID)
	}

	// The pipeline: mounted where the args say, with the grace period above its drain timeout.
	cm := m["ConfigMap"]
	mount := ""
	for _, v := range at(pod, "spec", "volumes").([]any) {
		if str(v, "configMap", "name") == str(cm, "metadata", "name") {
			for _, vm := range at(c, "volumeMounts").([]any) {
				if str(vm, "name") == str(v, "name") {
					mount = str(vm, "mountPath")
				}
			}
		}
	}
	pipelineSrc := str(cm, "data", filepath.Base(args[1]))
	if mount == "" || filepath.Dir(args[1]) != mount || pipelineSrc == "" {
		t.Fatalf("sluice run %s: the ConfigMap %q is mounted at %q and holds %v", args[1], str(cm, "metadata", "name"), mount, at(cm, "data"))
	}
	var pipeline map[string]any
	if err := yaml.Unmarshal([]byte(pipelineSrc), &pipeline); err != nil {
		t.Fatal(err)
	}
	drain := time.Minute // options.drain_timeout's default
	if s := str(pipeline, "options", "drain_timeout"); s != "" {
		if drain, err = time.ParseDuration(s); err != nil {
			t.Fatal(err)
		}
	}
	grace, _ := at(pod, "spec", "terminationGracePeriodSeconds").(int)
	if time.Duration(grace)*time.Second <= drain+10*time.Second {
		t.Errorf("terminationGracePeriodSeconds %d: a graceful stop may take drain_timeout (%v) + 10 s; the kubelet would kill it first", grace, drain)
	}

	// The autoscaler: the StatefulSet, on the lag of the group and topic the pipeline reads.
	so, source := m["ScaledObject"], at(pipeline, "pipeline", "transforms", 0, "config")
	if str(so, "spec", "scaleTargetRef", "kind") != "StatefulSet" || str(so, "spec", "scaleTargetRef", "name") != str(sts, "metadata", "name") {
		t.Errorf("the ScaledObject scales %v, not the StatefulSet", at(so, "spec", "scaleTargetRef"))
	}
	trigger := at(so, "spec", "triggers", 0, "metadata")
	for key, want := range map[string]string{"consumerGroup": str(source, "consumer_config", "group.id"), "topic": str(source, "topic"), "bootstrapServers": str(source, "bootstrap_servers")} {
		if want == "" || str(trigger, key) != want {
			t.Errorf("the ScaledObject's kafka trigger has %s %q, the pipeline %q", key, str(trigger, key), want)
		}
	}

	// With the binary: every flag is one sluice run takes, and the pipeline is valid.
	if testing.Short() {
		return
	}
	bin := releaseBinary(t)
	help, err := exec.Command(bin, "run", "--help").Output()
	if err != nil {
		t.Fatalf("sluice run --help: %v", err)
	}
	for f := range flags {
		if !regexp.MustCompile(`(?m)^  -` + regexp.QuoteMeta(f) + `\b`).Match(help) {
			t.Errorf("the StatefulSet passes --%s, which sluice run does not take", f)
		}
	}
	file := filepath.Join(t.TempDir(), "pipeline.yaml")
	if err := os.WriteFile(file, []byte(pipelineSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "validate", file).CombinedOutput(); err != nil {
		t.Errorf("sluice validate of the ConfigMap's pipeline: %v\n%s", err, out)
	}
}

func toStrings(v any) []string {
	var s []string
	for _, e := range v.([]any) {
		s = append(s, e.(string))
	}
	return s
}
