package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/internal/diag"
	"github.com/sluicehq/sluice/transforms/window"
	"gopkg.in/yaml.v3"
)

// Options are the runner options of a pipeline file (`options:`).
type Options struct {
	Name                               string             `yaml:"name" doc:"sluice adds: the pipeline's identity in checkpoints (default: the file name without extension)."`
	Streaming                          bool               `yaml:"streaming" doc:"Accepted for Beam compatibility; sluice always streams."`
	Delivery                           string             `yaml:"delivery" enum:"exactly_once,at_least_once" doc:"sluice adds: exactly_once (default) or at_least_once."`
	AsyncProgressTracking              bool               `yaml:"async_progress_tracking" alias:"asyncProgressTrackingEnabled" doc:"sluice adds: write progress in the background (at_least_once only)."`
	AsyncProgressCheckpointingInterval component.Duration `yaml:"async_progress_checkpointing_interval" alias:"asyncProgressCheckpointingInterval" doc:"sluice adds: how often background progress is written (default 1m)."`
	CheckpointInterval                 component.Duration `yaml:"checkpoint_interval" doc:"sluice adds: epoch length when no sink sets one (default 10s)."`
	Lanes                              int                `yaml:"lanes" doc:"sluice adds: parallel lanes (default: the number of CPUs)."`
	WindowIdleTimeout                  component.Duration `yaml:"window_idle_timeout" doc:"sluice adds: how long a partition may send nothing before it stops holding the event-time watermark back (default 1m)."`
	StateLimitMB                       int64              `yaml:"state_limit_mb" doc:"sluice adds: the most window state one Combine or GroupByKey may hold, in MiB (default 1024); beyond it the pipeline stops with an error."`
	DrainTimeout                       component.Duration `yaml:"drain_timeout" doc:"sluice adds: how long a graceful stop may take to commit the last epoch (default 1m)."`
	RepartitionPartitions              int                `yaml:"repartition_partitions" doc:"sluice adds: partitions of the repartition topics created for groupings across copies (default: as many as the source's topic; docs/scaling.md)."`
}

// SetDefaults sets the defaults of the runner options.
func (o *Options) SetDefaults() {
	o.Delivery = string(component.ExactlyOnce)
	o.CheckpointInterval = component.Duration(10 * time.Second)
	o.AsyncProgressCheckpointingInterval = component.Duration(time.Minute)
	o.DrainTimeout = component.Duration(time.Minute)
	o.StateLimitMB = 1024
	o.WindowIdleTimeout = component.Duration(time.Minute)
}

// pipelineSpec is the `pipeline:` mapping.
type pipelineSpec struct {
	Type            string      `yaml:"type" enum:"chain,composite" doc:"chain: each transform consumes the previous one; composite (default): transforms name their inputs."`
	Source          *yaml.Node  `yaml:"source" doc:"A source prepended to the transforms."`
	Transforms      []yaml.Node `yaml:"transforms" doc:"The transforms."`
	Sink            *yaml.Node  `yaml:"sink" doc:"A sink appended after the last transform."`
	ExtraTransforms []yaml.Node `yaml:"extra_transforms" doc:"chain only: transforms with explicit inputs, e.g. to consume error outputs."`
	Windowing       *yaml.Node  `yaml:"windowing" doc:"Windowing pushed down to the root transforms."`
}

// transformSpec is one transform of the pipeline.
type transformSpec struct {
	Type          string     `yaml:"type" required:"true" doc:"The transform type, e.g. MapToFields."`
	Name          string     `yaml:"name" doc:"A unique name to refer to this transform by."`
	Input         *yaml.Node `yaml:"input" doc:"What this transform consumes: a reference, a list of them, or a mapping of named inputs."`
	Output        *yaml.Node `yaml:"output" doc:"Accepted for Beam compatibility (composite outputs)."`
	Config        *yaml.Node `yaml:"config" doc:"The transform's configuration."`
	Windowing     *yaml.Node `yaml:"windowing" doc:"Windowing applied to this transform's inputs (or outputs, for a root)."`
	ResourceHints *yaml.Node `yaml:"resource_hints" doc:"Accepted and ignored."`
}

// compositeSpec is a nested `type: chain` or `type: composite` transform inside transforms:
// (Beam's nested pipelines): its own transforms, the inputs it takes and the outputs it names.
type compositeSpec struct {
	Type            string      `yaml:"type" required:"true" enum:"chain,composite" doc:"chain: each transform consumes the previous one; composite: transforms name their inputs."`
	Name            string      `yaml:"name" doc:"A unique name: its transforms are named <name>/<their name>."`
	Input           *yaml.Node  `yaml:"input" doc:"What it consumes: a reference, a list of them (flattened), or a mapping of named inputs; inside, a transform reads input key k as input: k (or input.k)."`
	Output          *yaml.Node  `yaml:"output" doc:"What it produces: a reference to an inner transform (its output is named output), or a mapping of output names to references. A chain without it gives its last transform's outputs."`
	Source          *yaml.Node  `yaml:"source" doc:"A source prepended to the transforms."`
	Transforms      []yaml.Node `yaml:"transforms" doc:"The inner transforms."`
	Sink            *yaml.Node  `yaml:"sink" doc:"A sink appended after the last transform."`
	ExtraTransforms []yaml.Node `yaml:"extra_transforms" doc:"chain only: transforms with explicit inputs, e.g. to consume error outputs."`
	Windowing       *yaml.Node  `yaml:"windowing" doc:"Windowing applied to its inputs and its root transforms."`
}

// file is a loaded pipeline file before its transforms are built.
type file struct {
	path     string
	dec      *component.Decoder
	root     *yaml.Node
	pipeline pipelineSpec
	// window is the pipeline's windowing: key, decoded, or nil.
	window   *window.Spec
	options  Options
	chain    bool
	warnings *diag.List
	// composites are the nested chain and composite transforms, outermost first (scope.go).
	composites []*composite
	// leaves are the transforms that run, nested ones included, with the Flattens that list
	// inputs add.
	leaves []*Node
	// implicitFor is the transform each implicit Flatten reads a list for: its references'
	// problems are reported as that transform's.
	implicitFor map[*Node]*Node
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// load parses src (the content of path), unless doc is its parsed document already, and
// decodes the pipeline structure.
func load(path string, src []byte, doc *yaml.Node, diags, warnings *diag.List) *file {
	lines := strings.Split(string(src), "\n")
	f := &file{path: path, dec: &component.Decoder{File: path, Lines: lines, Diags: diags, Warnings: warnings}, warnings: warnings}
	if doc == nil {
		doc = &yaml.Node{}
		if err := yaml.Unmarshal(src, doc); err != nil {
			f.yamlError(err)
			return nil
		}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		diags.Add(diag.Pos{File: path, Line: 1, Col: 1}, "the file is empty: a pipeline file needs a pipeline: key")
		return nil
	}
	f.root = doc.Content[0]
	if f.root.Kind != yaml.MappingNode {
		diags.Add(f.dec.At(f.root), "a pipeline file must be a mapping with a pipeline: key")
		return nil
	}
	var pipeNode, optNode *yaml.Node
	for i := 0; i+1 < len(f.root.Content); i += 2 {
		k, v := f.root.Content[i], f.root.Content[i+1]
		switch k.Value {
		case "pipeline":
			pipeNode = v
		case "options":
			optNode = v
		case "tests", "template":
			// Whole-pipeline tests and template headers are read by their own commands.
		default:
			warnings.Add(f.dec.At(k), "unknown top-level key %q is ignored", k.Value)
		}
	}
	f.options.SetDefaults()
	if optNode != nil {
		unknown, _ := f.dec.DecodeTolerant(optNode, &f.options, "options")
		for _, k := range unknown {
			warnings.Add(f.dec.At(k), "unknown option %q is ignored", k.Value)
		}
		f.checkOptions(optNode)
	}
	if f.options.Name == "" {
		f.options.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	}
	if pipeNode == nil {
		diags.Add(f.dec.At(f.root), "the file has no pipeline: key")
		return nil
	}
	switch pipeNode.Kind {
	case yaml.SequenceNode: // a bare list of transforms is a composite pipeline
		f.pipeline.Transforms = make([]yaml.Node, len(pipeNode.Content))
		for i, n := range pipeNode.Content {
			f.pipeline.Transforms[i] = *n
		}
	case yaml.MappingNode:
		if !f.dec.Decode(pipeNode, &f.pipeline, "pipeline") && (len(f.pipeline.Transforms) == 0 || !slices.Contains([]string{"", "chain", "composite"}, f.pipeline.Type)) {
			return nil // else its transforms are checked too: all problems at once
		}
	default:
		diags.Add(f.dec.At(pipeNode), "pipeline must be a mapping with transforms, or a list of transforms")
		return nil
	}
	f.chain = f.pipeline.Type == "chain"
	if !f.chain && len(f.pipeline.ExtraTransforms) > 0 {
		diags.Add(f.dec.At(component.MappingValue(pipeNode, "extra_transforms")),
			"extra_transforms is only for chain pipelines; in a composite pipeline list them under transforms")
	}
	if len(f.pipeline.Transforms) == 0 && f.pipeline.Source == nil && f.pipeline.Sink == nil {
		diags.Add(f.dec.At(pipeNode), "the pipeline has no transforms")
		return nil
	}
	return f
}

func (f *file) checkOptions(n *yaml.Node) {
	o := f.options
	if o.AsyncProgressTracking && o.Delivery == string(component.ExactlyOnce) {
		key := "async_progress_tracking"
		if component.MappingValue(n, key) == nil {
			key = "asyncProgressTrackingEnabled"
		}
		f.dec.Errorf(f.dec.At(component.MappingValue(n, key)),
			"async_progress_tracking needs delivery: at_least_once: after a crash the progress written in the background may be behind the output, so records would be written again").
			Detail = "set delivery: at_least_once to trade exactly-once for latency, or remove async_progress_tracking"
	}
	if time.Duration(o.CheckpointInterval) <= 0 {
		f.dec.Errorf(f.dec.At(component.MappingValue(n, "checkpoint_interval")), "checkpoint_interval must be longer than zero")
	}
	if time.Duration(o.DrainTimeout) <= 0 {
		f.dec.Errorf(f.dec.At(component.MappingValue(n, "drain_timeout")), "drain_timeout must be longer than zero")
	}
	if o.Lanes < 0 {
		f.dec.Errorf(f.dec.At(component.MappingValue(n, "lanes")), "lanes must be 1 or more (0: one per CPU)")
	}
}

// yamlError turns a YAML syntax error into a positioned diagnostic.
func (f *file) yamlError(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 1
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	col := 1
	if line-1 < len(f.dec.Lines) {
		l := f.dec.Lines[line-1]
		col = len(l) - len(strings.TrimLeft(l, " \t")) + 1
	}
	f.dec.Diags.Add(diag.Pos{File: f.path, Line: line, Col: col}, "invalid YAML: %s", msg).
		Detail = "check the indentation and that every key is followed by ': '"
}

// readFile reads a pipeline file, reporting a missing file as a diagnostic.
func readFile(path string) ([]byte, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the pipeline file: %w", err)
	}
	return src, nil
}
