package deploy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
	"sigs.k8s.io/yaml"
)

// manifests decodes manifests.yaml into typed objects, one per kind
// (several of RoleBinding and ClusterRoleBinding).
type manifests struct {
	sa        *v1.ServiceAccount
	cm        *v1.ConfigMap
	dep       *appsv1.Deployment
	svc       *v1.Service
	roles     []rbacv1.Role
	bindings  []rbacv1.RoleBinding
	cbindings []rbacv1.ClusterRoleBinding
}

// shipped are the folders holding a manifests.yaml and the
// scheduler-config.yaml its ConfigMap carries: this one, and the
// myscheduler example's.
var shipped = []string{".", "../myscheduler"}

// eachShipped runs f on the manifests of every shipped folder.
func eachShipped(t *testing.T, f func(t *testing.T, dir string, m *manifests)) {
	for _, dir := range shipped {
		t.Run(filepath.Base(filepath.Clean(dir)), func(t *testing.T) {
			f(t, dir, readManifests(t, filepath.Join(dir, "manifests.yaml")))
		})
	}
}

func readManifests(t *testing.T, path string) *manifests {
	t.Helper()
	objs, err := Objects(path)
	require.NoError(t, err)
	var m manifests
	for _, o := range objs {
		var err error
		switch o.Kind {
		case "ServiceAccount":
			m.sa, err = decode[v1.ServiceAccount](o)
		case "ConfigMap":
			m.cm, err = decode[v1.ConfigMap](o)
		case "Deployment":
			m.dep, err = decode[appsv1.Deployment](o)
		case "Service":
			m.svc, err = decode[v1.Service](o)
		case "Role":
			err = decodeTo(o, &m.roles)
		case "RoleBinding":
			err = decodeTo(o, &m.bindings)
		case "ClusterRoleBinding":
			err = decodeTo(o, &m.cbindings)
		default:
			t.Fatalf("%s: unexpected kind %s", path, o.Kind)
		}
		require.NoError(t, err, "%s %s", o.Kind, o.Name)
	}
	require.NotNil(t, m.sa, "a ServiceAccount")
	require.NotNil(t, m.cm, "a ConfigMap")
	require.NotNil(t, m.dep, "a Deployment")
	return &m
}

// decode reads o strictly (a misspelled field is an error) into a new T.
func decode[T any](o Object) (*T, error) {
	var x T
	return &x, yaml.UnmarshalStrict(o.Raw, &x)
}

// decodeTo decodes o and appends it to list.
func decodeTo[T any](o Object, list *[]T) error {
	x, err := decode[T](o)
	if err == nil {
		*list = append(*list, *x)
	}
	return err
}

// configFile is the part of a KubeSchedulerConfiguration these tests read.
type configFile struct {
	LeaderElection struct {
		LeaderElect       bool   `json:"leaderElect"`
		ResourceNamespace string `json:"resourceNamespace"`
		ResourceName      string `json:"resourceName"`
	} `json:"leaderElection"`
	Profiles []struct {
		SchedulerName string `json:"schedulerName"`
	} `json:"profiles"`
}

// TestConfigMapIsSchedulerConfig: the ConfigMap carries
// scheduler-config.yaml byte for byte, and the Deployment's --config
// names it where the ConfigMap is mounted, so the config a user edits and
// tests (the inprocess and apiserver packages load the file) is the one
// the cluster runs.
func TestConfigMapIsSchedulerConfig(t *testing.T) {
	eachShipped(t, testConfigMapIsSchedulerConfig)
}

func testConfigMapIsSchedulerConfig(t *testing.T, dir string, m *manifests) {
	want, err := os.ReadFile(filepath.Join(dir, "scheduler-config.yaml"))
	require.NoError(t, err)
	require.Len(t, m.cm.Data, 1)
	got, ok := m.cm.Data["scheduler-config.yaml"]
	require.True(t, ok, "ConfigMap key scheduler-config.yaml")
	require.Equal(t, string(want), got, "manifests.yaml's ConfigMap differs from scheduler-config.yaml: copy the file into it")

	spec := m.dep.Spec.Template.Spec
	require.Len(t, spec.Containers, 1)
	c := spec.Containers[0]
	require.Len(t, spec.Volumes, 1)
	require.NotNil(t, spec.Volumes[0].ConfigMap)
	assert.Equal(t, m.cm.Name, spec.Volumes[0].ConfigMap.Name, "the Deployment mounts the ConfigMap")
	require.Len(t, c.VolumeMounts, 1)
	assert.Equal(t, spec.Volumes[0].Name, c.VolumeMounts[0].Name)
	assert.Contains(t, c.Command, "--config="+c.VolumeMounts[0].MountPath+"/scheduler-config.yaml")
	assert.Equal(t, m.sa.Name, spec.ServiceAccountName)
	assert.Equal(t, m.sa.Namespace, m.dep.Namespace)
}

// TestLeaderElectionRBAC: the ServiceAccount may create the Lease the
// config names and get and update it — system:kube-scheduler allows only
// the Lease "kube-scheduler" (the shipped deployment once looped on
// `leases "schedkit-scheduler" is forbidden`) — and it holds upstream's
// kube-scheduler roles.
func TestLeaderElectionRBAC(t *testing.T) {
	eachShipped(t, func(t *testing.T, _ string, m *manifests) { testLeaderElectionRBAC(t, m) })
}

func testLeaderElectionRBAC(t *testing.T, m *manifests) {
	var cfg configFile
	require.NoError(t, yaml.Unmarshal([]byte(m.cm.Data["scheduler-config.yaml"]), &cfg))
	le := cfg.LeaderElection
	require.True(t, le.LeaderElect, "leader election on: replicas must not both schedule")
	require.NotEmpty(t, le.ResourceName)
	require.Equal(t, m.sa.Namespace, le.ResourceNamespace)

	boundToSA := func(subjects []rbacv1.Subject) bool {
		return slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == "ServiceAccount" && s.Name == m.sa.Name && s.Namespace == m.sa.Namespace
		})
	}
	// allowed: does a Role bound to the ServiceAccount in the Lease's
	// namespace allow verb on the lease called name ("" for create)?
	allowed := func(verb, name string) bool {
		for _, b := range m.bindings {
			if b.Namespace != le.ResourceNamespace || b.RoleRef.Kind != "Role" || !boundToSA(b.Subjects) {
				continue
			}
			for _, r := range m.roles {
				if r.Name != b.RoleRef.Name || r.Namespace != b.Namespace {
					continue
				}
				for _, rule := range r.Rules {
					if slices.Contains(rule.APIGroups, "coordination.k8s.io") && slices.Contains(rule.Resources, "leases") &&
						slices.Contains(rule.Verbs, verb) && (len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, name)) {
						return true
					}
				}
			}
		}
		return false
	}
	assert.True(t, allowed("create", ""), "create the Lease")
	assert.True(t, allowed("get", le.ResourceName), "get lease %s", le.ResourceName)
	assert.True(t, allowed("update", le.ResourceName), "update lease %s", le.ResourceName)
	// The namespaced Roles grant nothing on the cluster scheduler's Lease;
	// the binding to system:kube-scheduler does (get/update on the Lease
	// named kube-scheduler, as upstream's multiple-schedulers guide has
	// it): the manifests' header and the README say so, and a user who
	// wants the second scheduler kept off that Lease binds a copy of
	// system:kube-scheduler's rules without it instead.
	assert.False(t, allowed("update", "kube-scheduler"), "no Role of ours names the cluster scheduler's Lease")

	var roles []string
	for _, b := range m.cbindings {
		if boundToSA(b.Subjects) {
			roles = append(roles, b.RoleRef.Kind+"/"+b.RoleRef.Name)
		}
	}
	for _, b := range m.bindings {
		if boundToSA(b.Subjects) {
			roles = append(roles, b.Namespace+":"+b.RoleRef.Kind+"/"+b.RoleRef.Name)
		}
	}
	assert.Subset(t, roles, []string{
		"ClusterRole/system:kube-scheduler",
		"ClusterRole/system:volume-scheduler",
		"kube-system:Role/extension-apiserver-authentication-reader",
	})
}

// TestPodSecurityRestricted: the Deployment's Pod passes Pod Security
// "restricted" (latest), evaluated by upstream's own pod-security-admission
// checks, and keeps its root filesystem read-only.
func TestPodSecurityRestricted(t *testing.T) {
	eachShipped(t, func(t *testing.T, _ string, m *manifests) { testPodSecurityRestricted(t, m) })
}

func testPodSecurityRestricted(t *testing.T, m *manifests) {
	ev, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	require.NoError(t, err)
	tpl := m.dep.Spec.Template
	res := policy.AggregateCheckResults(ev.EvaluatePod(
		psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, &tpl.ObjectMeta, &tpl.Spec))
	assert.True(t, res.Allowed, "restricted: %s: %s", res.ForbiddenReason(), res.ForbiddenDetail())
	for _, c := range tpl.Spec.Containers {
		require.NotNil(t, c.SecurityContext, c.Name)
		require.NotNil(t, c.SecurityContext.ReadOnlyRootFilesystem, c.Name)
		assert.True(t, *c.SecurityContext.ReadOnlyRootFilesystem, "%s: read-only root filesystem", c.Name)
	}

	// The check fails without the settings the issue found missing.
	bare := tpl.DeepCopy()
	bare.Spec.SecurityContext.SeccompProfile = nil
	bare.Spec.Containers[0].SecurityContext.Capabilities = nil
	res = policy.AggregateCheckResults(ev.EvaluatePod(
		psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, &bare.ObjectMeta, &bare.Spec))
	assert.False(t, res.Allowed)
	assert.Contains(t, res.ForbiddenReason(), "seccompProfile")
	assert.Contains(t, res.ForbiddenReason(), "unrestricted capabilities")
}

// TestProbesAndMetrics: the container serves on upstream's secure port
// (10259, HTTPS: the scheduler's default), the probes hit /livez and
// /readyz there as kubeadm's static Pod does, and the Service exposes the
// port for /metrics.
func TestProbesAndMetrics(t *testing.T) {
	eachShipped(t, func(t *testing.T, _ string, m *manifests) { testProbesAndMetrics(t, m) })
}

func testProbesAndMetrics(t *testing.T, m *manifests) {
	c := m.dep.Spec.Template.Spec.Containers[0]
	require.Len(t, c.Ports, 1)
	port := c.Ports[0]
	assert.Equal(t, int32(10259), port.ContainerPort)
	for name, p := range map[string]*v1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		require.NotNil(t, p, name)
		require.NotNil(t, p.HTTPGet, name)
		assert.Equal(t, v1.URISchemeHTTPS, p.HTTPGet.Scheme, name)
		assert.Equal(t, port.ContainerPort, p.HTTPGet.Port.IntVal, name)
		want := "/livez"
		if name == "readiness" {
			want = "/readyz"
		}
		assert.Equal(t, want, p.HTTPGet.Path, name)
	}
	for _, a := range c.Command {
		assert.False(t, strings.HasPrefix(a, "--secure-port") || strings.HasPrefix(a, "--bind-address"), "the default secure port is the probed one: %s", a)
	}
	require.NotNil(t, m.svc, "a Service for /metrics")
	require.Len(t, m.svc.Spec.Ports, 1)
	assert.Equal(t, port.Name, m.svc.Spec.Ports[0].TargetPort.StrVal)
	assert.Equal(t, m.dep.Spec.Template.Labels, m.svc.Spec.Selector)
}
