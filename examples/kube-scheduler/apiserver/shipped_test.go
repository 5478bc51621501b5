package apiserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authnv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	etcdtesting "k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"sigs.k8s.io/yaml"

	"github.com/schedkit/schedkit/examples/kube-scheduler/deploy"
	"github.com/schedkit/schedkit/examples/kube-scheduler/myscheduler/plugins"
)

// shipped is one scheduler as the repository ships it: the package of its
// main, its manifests, and the names in them.
type shipped struct {
	pkg, manifests string // relative to this folder
	bin            string // the binary's name, as the Deployment's command runs it
	schedulerName  string
}

// startRBACServer starts etcd and kube-apiserver v1.37.2 in-process with
// RBAC authorization (upstream's bootstrap roles, such as
// system:kube-scheduler, are created by its post-start hook before it
// reports healthy). The admission plugins that wait for controllers this
// test does not run are off, as in TestSchedulerOnAPIServer.
func startRBACServer(t *testing.T) *rest.Config {
	etcd := etcdtesting.RunEtcd(t, nil)
	t.Cleanup(func() { _ = etcd.Close() })
	storage := storagebackend.NewDefaultConfig("/schedkit-e2e/registry", nil)
	storage.Transport.ServerList = etcd.Endpoints()
	server, err := apiservertesting.StartTestServer(t, apiservertesting.NewDefaultTestServerOptions(),
		[]string{"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition", "--authorization-mode=RBAC"}, storage)
	require.NoError(t, err, "starting kube-apiserver")
	t.Cleanup(server.TearDownFn)
	return server.ClientConfig
}

// resources maps the kinds the manifests hold to their API resources.
var resources = map[string]schema.GroupVersionResource{
	"ServiceAccount":     {Version: "v1", Resource: "serviceaccounts"},
	"ConfigMap":          {Version: "v1", Resource: "configmaps"},
	"Service":            {Version: "v1", Resource: "services"},
	"Deployment":         {Group: "apps", Version: "v1", Resource: "deployments"},
	"Role":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	"ClusterRoleBinding": {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
}

// apply creates every object of a manifest file as it is written, as
// `kubectl create -f` would, with the admin's credentials.
func apply(t *testing.T, admin *rest.Config, path string) {
	objs, err := deploy.Objects(path)
	require.NoError(t, err)
	dyn, err := dynamic.NewForConfig(admin)
	require.NoError(t, err)
	for _, o := range objs {
		gvr, ok := resources[o.Kind]
		require.True(t, ok, "%s: no resource for kind %s", path, o.Kind)
		var u unstructured.Unstructured
		require.NoError(t, yaml.Unmarshal(o.Raw, &u.Object), "%s %s", o.Kind, o.Name)
		_, err := dyn.Resource(gvr).Namespace(o.Namespace).Create(context.Background(), &u, metav1.CreateOptions{})
		require.NoError(t, err, "applying %s %s/%s", o.Kind, o.Namespace, o.Name)
	}
}

// inClusterFiles reads, from the API server, what the Deployment would
// run with — its ServiceAccount's token (a TokenRequest, as the kubelet
// makes) and the config file in its ConfigMap — and writes the kubeconfig
// a Pod's in-cluster config amounts to and that config file with
// clientConnection.kubeconfig pointing at it (the only change: in a Pod the
// empty value means in-cluster). It returns the config path, the
// kubeconfig path, the config's leader-election Lease, the command's
// binary name, the token and its ServiceAccount.
func inClusterFiles(t *testing.T, admin *rest.Config, client kubernetes.Interface, dir string) (cfgPath, kubeconfig, lease, bin, token, sa string) {
	ctx := context.Background()
	deps, err := client.AppsV1().Deployments(metav1.NamespaceSystem).List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	require.Len(t, deps.Items, 1)
	spec := deps.Items[0].Spec.Template.Spec
	c := spec.Containers[0]
	var cfgArg string
	for _, a := range c.Command {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			cfgArg = v
		}
	}
	require.NotEmpty(t, cfgArg, "the Deployment's --config")
	require.Len(t, spec.Volumes, 1)
	cm, err := client.CoreV1().ConfigMaps(metav1.NamespaceSystem).Get(ctx, spec.Volumes[0].ConfigMap.Name, metav1.GetOptions{})
	require.NoError(t, err)
	raw, ok := cm.Data[strings.TrimPrefix(cfgArg, c.VolumeMounts[0].MountPath+"/")]
	require.True(t, ok, "the ConfigMap holds the file --config names")

	tok, err := client.CoreV1().ServiceAccounts(metav1.NamespaceSystem).CreateToken(ctx, spec.ServiceAccountName,
		&authnv1.TokenRequest{Spec: authnv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}, metav1.CreateOptions{})
	require.NoError(t, err)
	saCfg := rest.AnonymousClientConfig(admin)
	saCfg.BearerToken = tok.Status.Token
	kubeconfig, err = writeKubeconfig(dir, saCfg)
	require.NoError(t, err)

	var doc map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(raw), &doc))
	conn, _ := doc["clientConnection"].(map[string]any) // absent: in-cluster too
	if conn == nil {
		conn = map[string]any{}
		doc["clientConnection"] = conn
	}
	conn["kubeconfig"] = kubeconfig
	le, _ := doc["leaderElection"].(map[string]any)
	require.NotNil(t, le, "the config's leaderElection")
	require.Equal(t, true, le["leaderElect"], "leader election on, as shipped")
	out, err := yaml.Marshal(doc)
	require.NoError(t, err)
	cfgPath = filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgPath, out, 0o600))
	return cfgPath, kubeconfig, le["resourceName"].(string), filepath.Base(c.Command[0]), tok.Status.Token, spec.ServiceAccountName
}

// freePort returns a TCP port free on 127.0.0.1 now.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer is a bytes.Buffer safe for the process's writer and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runShipped applies sh's manifests to a real API server with RBAC on,
// builds sh's binary with `go build` and runs it as the Deployment would
// (the ServiceAccount's token, the ConfigMap's config, leader election
// on; delegated authentication and authorization through the same
// token, as in a Pod), creates nodes and pods of its profile, and returns
// the pods once every one is bound. On the way it checks the scheduler
// took the Lease its config names, that /readyz answers on the secure
// port without credentials (the probes) and /metrics with an authorized
// token, and that nothing it asked for was forbidden; at the end it
// stops the process with SIGTERM and expects exit status 0.
func runShipped(t *testing.T, sh shipped, nodes []*v1.Node, pods []*v1.Pod) []v1.Pod {
	start := time.Now()
	dir := t.TempDir()
	binPath := filepath.Join(dir, sh.bin)
	build := exec.Command("go", "build", "-o", binPath, sh.pkg)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "go build %s: %s", sh.pkg, out)
	t.Logf("built %s in %v", sh.pkg, time.Since(start).Round(time.Millisecond))

	admin := startRBACServer(t)
	client, err := kubernetes.NewForConfig(admin)
	require.NoError(t, err)
	apply(t, admin, sh.manifests)
	cfgPath, kubeconfig, lease, bin, token, sa := inClusterFiles(t, admin, client, dir)
	require.Equal(t, sh.bin, bin, "the Deployment runs the binary the image holds")

	port := freePort(t)
	var logs syncBuffer
	cmd := exec.Command(binPath, "--config="+cfgPath, "--v=2", fmt.Sprintf("--secure-port=%d", port), "--bind-address=127.0.0.1",
		"--authentication-kubeconfig="+kubeconfig, "--authorization-kubeconfig="+kubeconfig)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			assert.NoError(t, err, "the scheduler exits 0 on SIGTERM")
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Errorf("the scheduler did not exit within 30 s of SIGTERM")
		}
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() {
			t.Logf("scheduler log:\n%s", logs.String())
		}
	})

	ctx := context.Background()
	for _, n := range nodes {
		_, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for _, p := range pods {
		p.Spec.SchedulerName = sh.schedulerName
		_, err := client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		require.NoError(t, err)
	}

	var got []v1.Pod
	if !assert.Eventually(t, func() bool {
		list, err := client.CoreV1().Pods(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		got = list.Items
		for i := range got {
			if got[i].Spec.NodeName == "" {
				return false
			}
		}
		return len(got) == len(pods)
	}, 90*time.Second, 200*time.Millisecond, "every pod bound") {
		for i := range got {
			if got[i].Spec.NodeName == "" {
				t.Logf("unbound: %s: %+v", got[i].Name, got[i].Status.Conditions)
			}
		}
		t.FailNow()
	}
	t.Logf("%d pods bound %v after the start", len(got), time.Since(start).Round(time.Millisecond))

	l, err := client.CoordinationV1().Leases(metav1.NamespaceSystem).Get(ctx, lease, metav1.GetOptions{})
	require.NoError(t, err, "the Lease the config names")
	require.NotNil(t, l.Spec.HolderIdentity)
	assert.NotEmpty(t, *l.Spec.HolderIdentity, "the scheduler holds the Lease")

	// Before the HTTP checks below, whose refusals are deliberate.
	assert.NotContains(t, logs.String(), "forbidden", "the ServiceAccount's RBAC covers what the scheduler does")

	insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the scheduler's self-signed serving certificate
	get := func(path, token string) int {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d%s", port, path), nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := insecure.Do(req)
		require.NoError(t, err, path)
		defer resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get("/readyz", ""), "readiness probe")
	assert.Equal(t, http.StatusOK, get("/livez", ""), "liveness probe")
	assert.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, get("/metrics", ""), "/metrics needs an authorized token")
	assert.Equal(t, http.StatusForbidden, get("/metrics", token), "the ServiceAccount may not read /metrics")
	// What a scraper's ServiceAccount gets: get on the /metrics URL.
	_, err = client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = client.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "metrics-reader"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: metav1.NamespaceSystem, Name: sa}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	assert.Eventually(t, func() bool { return get("/metrics", token) == http.StatusOK }, 30*time.Second, 500*time.Millisecond,
		"/metrics for a token allowed to read it (the scheduler caches authorization decisions briefly)")

	stop()
	return got
}

// TestShippedManifests: deploy/manifests.yaml applied as shipped (RBAC
// on) and the schedkit kube-scheduler run from it binds 40 pods on 10
// nodes. The manifests of issue 19 failed here: `leases
// "schedkit-scheduler" is forbidden` in a loop and no pod bound.
func TestShippedManifests(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the scheduler and starts etcd, kube-apiserver and the binary; skipped under -short")
	}
	var nodes []*v1.Node
	for i := range 10 {
		nodes = append(nodes, e2eNode(i))
	}
	var pods []*v1.Pod
	for i := range 40 {
		pods = append(pods, e2ePod(i))
	}
	got := runShipped(t, shipped{pkg: "..", manifests: "../deploy/manifests.yaml", bin: "kube-scheduler", schedulerName: "schedkit"}, nodes, pods)
	assert.Len(t, got, 40)
}

// TestMyScheduler: the myscheduler example's manifests applied as shipped
// and its binary run from them, on issue 19's scenario: a preferred node
// with a license budget of 2 and two nodes with budgets of 8; 12 licensed
// pods are all bound, 2 on the preferred node (the budget as a Filter;
// at Reserve 8 stayed pending).
func TestMyScheduler(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the scheduler and starts etcd, kube-apiserver and the binary; skipped under -short")
	}
	nodes := []*v1.Node{e2eNode(0), e2eNode(1), e2eNode(2)}
	nodes[0].Labels = map[string]string{"example.com/preferred": "true", plugins.BudgetLabel: "2"}
	nodes[1].Labels = map[string]string{plugins.BudgetLabel: "8"}
	nodes[2].Labels = map[string]string{plugins.BudgetLabel: "8"}
	var pods []*v1.Pod
	for i := range 12 {
		p := e2ePod(i)
		p.Labels = map[string]string{plugins.LicensedLabel: "true"}
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(100, resource.DecimalSI)}
		pods = append(pods, p)
	}
	got := runShipped(t, shipped{pkg: "../myscheduler", manifests: "../myscheduler/manifests.yaml", bin: "myscheduler", schedulerName: "myscheduler"}, nodes, pods)
	on := map[string]int{}
	for _, p := range got {
		on[p.Spec.NodeName]++
	}
	t.Logf("pods per node: %v", on)
	assert.Equal(t, 2, on[nodes[0].Name], "the preferred node up to its budget")
	assert.Equal(t, 10, on[nodes[1].Name]+on[nodes[2].Name])
}
