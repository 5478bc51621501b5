package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// The scheduler_perf package (k8s.io/kubernetes/test/integration/scheduler_perf)
// is importable, but its test-case and op types are unexported and it pulls
// in an etcd-backed API server; so the YAML is decoded here, into structs
// that mirror upstream's field for field, strictly: an unknown field is an
// error naming the file, the test case and the op.

// suiteDir is where scheduler_perf lives inside the k8s.io/kubernetes module.
const suiteDir = "test/integration/scheduler_perf"

// testCase is one named entry of a performance-config.yaml
// (upstream's testCase).
type testCase struct {
	Name                           string            `json:"name"`
	FeatureGates                   map[string]bool   `json:"featureGates"`
	MetricsCollectorConfig         json.RawMessage   `json:"metricsCollectorConfig"`
	WorkloadTemplate               []json.RawMessage `json:"workloadTemplate"`
	Workloads                      []*workload       `json:"workloads"`
	SchedulerConfigPath            string            `json:"schedulerConfigPath"`
	DefaultPodTemplatePath         *string           `json:"defaultPodTemplatePath"`
	Labels                         []string          `json:"labels"`
	DefaultThresholdMetricSelector *metricSelector   `json:"defaultThresholdMetricSelector"`

	// Filled in by the loader.
	File  string // absolute path of the performance-config.yaml
	Topic string // the topic name the directory's benchmark passes
	Ops   []op   // WorkloadTemplate decoded
}

// workload is one size of a test case (upstream's Workload).
type workload struct {
	Name                    string          `json:"name"`
	Params                  map[string]any  `json:"params"`
	Labels                  []string        `json:"labels"`
	Threshold               threshold       `json:"threshold"`
	ThresholdMetricSelector *metricSelector `json:"thresholdMetricSelector"`
	FeatureGates            map[string]bool `json:"featureGates"`
}

type metricSelector struct {
	Name        string            `json:"name"`
	Labels      map[string]string `json:"labels"`
	DataBucket  string            `json:"dataBucket"`
	ExpectLower bool              `json:"expectLower"`
}

// threshold is a number or a topic → number map, as upstream's thresholds.
type threshold struct {
	Value   float64
	ByTopic map[string]float64
}

func (t *threshold) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &t.Value); err == nil {
		return nil
	}
	return json.Unmarshal(b, &t.ByTopic)
}

// For is the threshold that applies under topic (0: none).
func (t threshold) For(topic string) float64 {
	if v, ok := t.ByTopic[topic]; ok {
		return v
	}
	return t.Value
}

// op is one decoded entry of a workload template: Code and one of the
// pointers.
type op struct {
	Code  string
	Index int

	Nodes      *createNodesOp
	Namespaces *createNamespacesOp
	Pods       *createPodsOp
	Any        *createAnyOp
	Churn      *churnOp
	Barrier    *barrierOp
	Sleep      *sleepOp
	Delete     *deletePodsOp
	StartM     *startMetricsOp
	PodSets    *createPodSetsOp // unrolled by buildPlan (unrollPodSets)
	Other      any              // opcodes this runner does not execute (DRA, pod groups, updates, profiles)
}

type createNodesOp struct {
	Opcode                   string                    `json:"opcode"`
	Count                    int                       `json:"count"`
	CountParam               string                    `json:"countParam"`
	NodeTemplatePath         *string                   `json:"nodeTemplatePath"`
	NodeAllocatableStrategy  *nodeAllocatableStrategy  `json:"nodeAllocatableStrategy"`
	LabelNodePrepareStrategy *labelNodePrepareStrategy `json:"labelNodePrepareStrategy"`
	UniqueNodeLabelStrategy  *uniqueNodeLabelStrategy  `json:"uniqueNodeLabelStrategy"`
	TemplateParams           map[string]any            `json:"templateParams"`
}

type nodeAllocatableStrategy struct {
	NodeAllocatable    map[string]string          `json:"nodeAllocatable"`
	CsiNodeAllocatable map[string]json.RawMessage `json:"csiNodeAllocatable"`
	MigratedPlugins    []string                   `json:"migratedPlugins"`
}

type labelNodePrepareStrategy struct {
	LabelKey    string   `json:"labelKey"`
	LabelValues []string `json:"labelValues"`
}

type uniqueNodeLabelStrategy struct {
	LabelKey string `json:"labelKey"`
}

type createNamespacesOp struct {
	Opcode                string  `json:"opcode"`
	Prefix                string  `json:"prefix"`
	Count                 int     `json:"count"`
	CountParam            string  `json:"countParam"`
	NamespaceTemplatePath *string `json:"namespaceTemplatePath"`
}

type createPodsOp struct {
	Opcode                            string          `json:"opcode"`
	Count                             int             `json:"count"`
	CountParam                        string          `json:"countParam"`
	CountMultiplierParam              string          `json:"countMultiplierParam"`
	SteadyState                       bool            `json:"steadyState"`
	SteadyStateParam                  string          `json:"steadyStateParam"`
	Duration                          json.RawMessage `json:"duration"`
	DurationParam                     string          `json:"durationParam"`
	CollectMetrics                    bool            `json:"collectMetrics"`
	Namespace                         *string         `json:"namespace"`
	PodTemplatePath                   *string         `json:"podTemplatePath"`
	SkipWaitToCompletion              bool            `json:"skipWaitToCompletion"`
	PersistentVolumeTemplatePath      *string         `json:"persistentVolumeTemplatePath"`
	PersistentVolumeClaimTemplatePath *string         `json:"persistentVolumeClaimTemplatePath"`
	TemplateParams                    map[string]any  `json:"templateParams"`
	SignatureBatchSize                int             `json:"signatureBatchSize"`
	SignatureBatchSizeParam           string          `json:"signatureBatchSizeParam"`
}

type createPodSetsOp struct {
	Opcode          string       `json:"opcode"`
	Count           int          `json:"count"`
	CountParam      string       `json:"countParam"`
	NamespacePrefix string       `json:"namespacePrefix"`
	CreatePodsOp    createPodsOp `json:"createPodsOp"`
}

type createAnyOp struct {
	Opcode         string         `json:"opcode"`
	Namespace      string         `json:"namespace"`
	TemplatePath   string         `json:"templatePath"`
	Count          *int           `json:"count"`
	CountParam     string         `json:"countParam"`
	TemplateParams map[string]any `json:"templateParams"`
}

type deletePodsOp struct {
	Opcode               string            `json:"opcode"`
	Namespace            string            `json:"namespace"`
	LabelSelector        map[string]string `json:"labelSelector"`
	SkipWaitToCompletion bool              `json:"skipWaitToCompletion"`
	DeletePodsPerSecond  int               `json:"deletePodsPerSecond"`
}

type churnOp struct {
	Opcode               string   `json:"opcode"`
	Mode                 string   `json:"mode"`
	Number               int      `json:"number"`
	IntervalMilliseconds int64    `json:"intervalMilliseconds"`
	Namespace            *string  `json:"namespace"`
	TemplatePaths        []string `json:"templatePaths"`
}

type barrierOp struct {
	Opcode           string            `json:"opcode"`
	Namespaces       []string          `json:"namespaces"`
	LabelSelector    map[string]string `json:"labelSelector"`
	StageRequirement string            `json:"stageRequirement"`
}

type sleepOp struct {
	Opcode        string          `json:"opcode"`
	Duration      json.RawMessage `json:"duration"`
	DurationParam string          `json:"durationParam"`
}

type startMetricsOp struct {
	Opcode        string            `json:"opcode"`
	Name          string            `json:"name"`
	Namespaces    []string          `json:"namespaces"`
	LabelSelector map[string]string `json:"labelSelector"`
}

type stopMetricsOp struct {
	Opcode string `json:"opcode"`
}

type createPodGroupsOp struct {
	Opcode         string         `json:"opcode"`
	Namespace      string         `json:"namespace"`
	TemplatePath   string         `json:"templatePath"`
	TemplateParams map[string]any `json:"templateParams"`
	Count          int            `json:"count"`
	CountParam     string         `json:"countParam"`
}

type createResourceClaimsOp struct {
	Opcode       string `json:"opcode"`
	Count        int    `json:"count"`
	CountParam   string `json:"countParam"`
	Namespace    string `json:"namespace"`
	TemplatePath string `json:"templatePath"`
}

type allocResourceClaimsOp struct {
	Opcode    string `json:"opcode"`
	Namespace string `json:"namespace"`
}

type updateAnyOp struct {
	Opcode          string   `json:"opcode"`
	Namespace       string   `json:"namespace"`
	TemplatePath    string   `json:"templatePath"`
	Count           *int     `json:"count"`
	CountParam      string   `json:"countParam"`
	UpdatePerSecond int      `json:"updatePerSecond"`
	Subresources    []string `json:"subresources"`
}

type profileOp struct {
	Opcode   string `json:"opcode"`
	Type     string `json:"type"`
	FilePath string `json:"filePath"`
}

// decodeStrict decodes JSON into v, rejecting unknown fields and trailing
// data.
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return fmt.Errorf("trailing data after the object")
	}
	return nil
}

// decodeOp decodes one workloadTemplate entry.
func decodeOp(raw json.RawMessage, index int) (op, error) {
	var head struct {
		Opcode string `json:"opcode"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return op{}, fmt.Errorf("workloadTemplate[%d]: %w", index, err)
	}
	o := op{Code: head.Opcode, Index: index}
	var v any
	switch head.Opcode {
	case "createNodes":
		o.Nodes = &createNodesOp{}
		v = o.Nodes
	case "createNamespaces":
		o.Namespaces = &createNamespacesOp{}
		v = o.Namespaces
	case "createPods":
		o.Pods = &createPodsOp{}
		v = o.Pods
	case "createAny":
		o.Any = &createAnyOp{}
		v = o.Any
	case "churn":
		o.Churn = &churnOp{}
		v = o.Churn
	case "barrier":
		o.Barrier = &barrierOp{}
		v = o.Barrier
	case "sleep":
		o.Sleep = &sleepOp{}
		v = o.Sleep
	case "deletePods":
		o.Delete = &deletePodsOp{}
		v = o.Delete
	case "startCollectingMetrics":
		o.StartM = &startMetricsOp{}
		v = o.StartM
	case "stopCollectingMetrics":
		v = &stopMetricsOp{}
	case "createPodSets":
		o.PodSets = &createPodSetsOp{}
		v = o.PodSets
	case "createPodGroups":
		o.Other = &createPodGroupsOp{}
		v = o.Other
	case "createResourceClaims":
		o.Other = &createResourceClaimsOp{}
		v = o.Other
	case "allocResourceClaims":
		o.Other = &allocResourceClaimsOp{}
		v = o.Other
	case "updateAny":
		o.Other = &updateAnyOp{}
		v = o.Other
	case "startCollectingProfile", "stopCollectingProfile":
		v = &profileOp{}
	default:
		return op{}, fmt.Errorf("workloadTemplate[%d]: unknown opcode %q", index, head.Opcode)
	}
	if err := decodeStrict(raw, v); err != nil {
		return op{}, fmt.Errorf("workloadTemplate[%d] (opcode %s): %w", index, head.Opcode, err)
	}
	if o.Pods != nil && o.Pods.CollectMetrics && o.Pods.SkipWaitToCompletion {
		return op{}, fmt.Errorf("workloadTemplate[%d] (opcode createPods): collectMetrics and skipWaitToCompletion cannot both be true", index)
	}
	if o.Churn != nil && o.Churn.Mode != "create" && o.Churn.Mode != "recreate" {
		return op{}, fmt.Errorf("workloadTemplate[%d] (opcode churn): mode %q: want create or recreate", index, o.Churn.Mode)
	}
	return o, nil
}

// loadFile reads one performance-config.yaml.
func loadFile(path, topic string) ([]*testCase, error) {
	y, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	j, err := yaml.YAMLToJSONStrict(y)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var tcs []*testCase
	if err := decodeStrict(j, &tcs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for i, tc := range tcs {
		if tc.Name == "" {
			return nil, fmt.Errorf("%s: test case %d has no name", path, i)
		}
		tc.File, tc.Topic = path, topic
		for j, raw := range tc.WorkloadTemplate {
			o, err := decodeOp(raw, j)
			if err != nil {
				return nil, fmt.Errorf("%s: test case %s: %w", path, tc.Name, err)
			}
			tc.Ops = append(tc.Ops, o)
		}
		seen := map[string]bool{}
		for _, w := range tc.Workloads {
			if seen[w.Name] {
				return nil, fmt.Errorf("%s: test case %s: workload name %s is not unique", path, tc.Name, w.Name)
			}
			seen[w.Name] = true
		}
	}
	return tcs, nil
}

var topicRE = regexp.MustCompile(`RunBenchmarkPerfScheduling\(\s*b,\s*"performance-config\.yaml",\s*"([^"]+)"`)

// dirTopic reads the topic name that the directory's benchmark passes to
// RunBenchmarkPerfScheduling (thresholds may be given per topic); "" if the
// directory has none or several.
func dirTopic(dir string) string {
	files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
	var topics []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, m := range topicRE.FindAllSubmatch(b, -1) {
			topics = append(topics, string(m[1]))
		}
	}
	if len(topics) == 0 {
		return ""
	}
	// dra_test.go runs the same file under "dra" and "dra_experimental":
	// the first is the one CI's thresholds name.
	return topics[0]
}

// loadSuite reads every performance-config.yaml under root (the
// scheduler_perf directory), in path order.
func loadSuite(root string) ([]*testCase, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "performance-config.yaml" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no performance-config.yaml under %s", root)
	}
	sort.Strings(files)
	var all []*testCase
	for _, f := range files {
		tcs, err := loadFile(f, dirTopic(filepath.Dir(f)))
		if err != nil {
			return nil, err
		}
		all = append(all, tcs...)
	}
	return all, nil
}

// param returns the workload parameter named by ref ("$name").
func (w *workload) param(ref string) (any, error) {
	if !strings.HasPrefix(ref, "$") {
		return nil, fmt.Errorf("parameter reference %q does not start with $", ref)
	}
	v, ok := w.Params[ref[1:]]
	if !ok {
		return nil, fmt.Errorf("workload %s: parameter %s is undefined", w.Name, ref[1:])
	}
	return v, nil
}

func (w *workload) intParam(ref string) (int, error) {
	v, err := w.param(ref)
	if err != nil {
		return 0, err
	}
	f, ok := v.(float64)
	if !ok {
		return 0, fmt.Errorf("workload %s: parameter %s is %T, want a number", w.Name, ref[1:], v)
	}
	return int(f), nil
}

// resolveParams replaces "$name" and "$name|default" values of a
// templateParams map with the workload's parameters (upstream's
// resolveTemplateParams).
func (w *workload) resolveParams(in map[string]any) (map[string]any, error) {
	if len(in) == 0 {
		return in, nil
	}
	out := make(map[string]any, len(in))
	for k, v := range in {
		out[k] = v
		s, ok := v.(string)
		if !ok || !strings.HasPrefix(s, "$") {
			continue
		}
		key, def, hasDef := strings.Cut(s[1:], "|")
		if val, ok := w.Params[key]; ok {
			out[k] = val
			continue
		}
		if !hasDef {
			return nil, fmt.Errorf("workload %s: template parameter %s refers to undefined parameter %s", w.Name, k, key)
		}
		var val any
		if err := yaml.Unmarshal([]byte(def), &val); err != nil {
			return nil, fmt.Errorf("workload %s: default %q of parameter %s: %w", w.Name, def, key, err)
		}
		out[k] = val
	}
	return out, nil
}

// duration decodes a metav1.Duration-style JSON string.
func parseDuration(raw json.RawMessage, param string, w *workload) (time.Duration, error) {
	if param != "" {
		v, err := w.param(param)
		if err != nil {
			return 0, err
		}
		s, ok := v.(string)
		if !ok {
			return 0, fmt.Errorf("workload %s: parameter %s is %T, want a duration string", w.Name, param[1:], v)
		}
		return time.ParseDuration(s)
	}
	if len(raw) == 0 {
		return 0, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, err
	}
	return time.ParseDuration(s)
}

// count resolves a count/countParam pair.
func (w *workload) count(n int, param string) (int, error) {
	if param == "" {
		return n, nil
	}
	return w.intParam(param)
}

// nodeCount is the number of nodes the workload's createNodes ops make.
func (tc *testCase) nodeCount(w *workload) int {
	n := 0
	for _, o := range tc.Ops {
		if o.Nodes != nil {
			c, err := w.count(o.Nodes.Count, o.Nodes.CountParam)
			if err == nil {
				n += c
			}
		}
	}
	return n
}

// podCount is the number of pods the workload's createPods ops make,
// createPodSets unrolled (churn and steady-state replacements not
// counted).
func (tc *testCase) podCount(w *workload) int {
	n := 0
	ops, err := unrollPodSets(tc.Ops, w)
	if err != nil {
		ops = tc.Ops
	}
	for _, o := range ops {
		if o.Pods != nil {
			c, err := w.count(o.Pods.Count, o.Pods.CountParam)
			if err != nil {
				continue
			}
			if o.Pods.CountMultiplierParam != "" {
				m, err := w.intParam(o.Pods.CountMultiplierParam)
				if err == nil {
					c *= m
				}
			}
			n += c
		}
	}
	return n
}

// pickWorkload chooses the workload of tc for size: "smallest" (fewest
// nodes, then fewest pods), or "<N>Nodes": the workload named exactly so,
// else the one whose node count is nearest N on a log scale (fewer pods on
// a tie). File
// order breaks the remaining ties.
func (tc *testCase) pickWorkload(size string) (*workload, error) {
	if len(tc.Workloads) == 0 {
		return nil, fmt.Errorf("%s: test case %s has no workloads", tc.File, tc.Name)
	}
	if size == "smallest" {
		best := tc.Workloads[0]
		for _, w := range tc.Workloads[1:] {
			if n, bn := tc.nodeCount(w), tc.nodeCount(best); n < bn || n == bn && tc.podCount(w) < tc.podCount(best) {
				best = w
			}
		}
		return best, nil
	}
	for _, w := range tc.Workloads {
		if w.Name == size {
			return w, nil
		}
	}
	num, ok := strings.CutSuffix(size, "Nodes")
	want, err := strconv.Atoi(num)
	if !ok || err != nil || want <= 0 {
		return nil, fmt.Errorf("-size %q: want smallest, a workload name or <N>Nodes", size)
	}
	// Nearest on a log scale: 1,000 nodes is nearer 500 than 5 is.
	dist := func(w *workload) float64 {
		n := tc.nodeCount(w)
		if n <= 0 {
			return math.Inf(1)
		}
		return math.Abs(math.Log(float64(n) / float64(want)))
	}
	ws := slices.Clone(tc.Workloads)
	slices.SortStableFunc(ws, func(a, b *workload) int {
		if da, db := dist(a), dist(b); da != db {
			return cmp.Compare(da, db)
		}
		return tc.podCount(a) - tc.podCount(b)
	})
	return ws[0], nil
}
