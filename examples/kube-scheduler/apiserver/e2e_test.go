package apiserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/server/healthz"
	etcdtesting "k8s.io/apiserver/pkg/storage/etcd3/testserver"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/component-base/configz"
	resourcehelper "k8s.io/component-helpers/resource"
	fwk "k8s.io/kube-scheduler/framework"
	apiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"sigs.k8s.io/yaml"

	"github.com/schedkit/schedkit/framework/kubescheduler"
	"github.com/schedkit/schedkit/reserve"
	"github.com/schedkit/schedkit/snapshot"
)

// calls counts the extension points of schedkit's plugins that the
// scheduler ran, and keeps the reserve plugin for its ledger.
type calls struct {
	filter, score, reserve atomic.Int64
	res                    atomic.Pointer[kubescheduler.ReservePlugin]
}

type countedFit struct {
	*kubescheduler.FilterPlugin
	n *atomic.Int64
}

func (c countedFit) Filter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) *fwk.Status {
	c.n.Add(1)
	return c.FilterPlugin.Filter(ctx, cs, pod, ni)
}

type countedScore struct {
	*kubescheduler.ScorePlugin
	n *atomic.Int64
}

func (c countedScore) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, ni fwk.NodeInfo) (int64, *fwk.Status) {
	c.n.Add(1)
	return c.ScorePlugin.Score(ctx, cs, pod, ni)
}

type countedReserve struct {
	*kubescheduler.ReservePlugin
	n *atomic.Int64
}

func (c countedReserve) Reserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	c.n.Add(1)
	return c.ReservePlugin.Reserve(ctx, cs, pod, node)
}

// plugins are the app.WithPlugin options of main.go, each factory wrapped
// to count calls.
func (c *calls) plugins() []app.Option {
	return []app.Option{
		app.WithPlugin(kubescheduler.FitName, func(ctx context.Context, obj k8sruntime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := kubescheduler.NewSchedkitFit(ctx, obj, h)
			if err != nil {
				return nil, err
			}
			return countedFit{p.(*kubescheduler.FilterPlugin), &c.filter}, nil
		}),
		app.WithPlugin(kubescheduler.ScoreName, func(ctx context.Context, obj k8sruntime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := kubescheduler.NewSchedkitScore(ctx, obj, h)
			if err != nil {
				return nil, err
			}
			return countedScore{p.(*kubescheduler.ScorePlugin), &c.score}, nil
		}),
		app.WithPlugin(kubescheduler.ReserveName, func(ctx context.Context, obj k8sruntime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := kubescheduler.NewSchedkitReserve(ctx, obj, h)
			if err != nil {
				return nil, err
			}
			c.res.Store(p.(*kubescheduler.ReservePlugin))
			return countedReserve{p.(*kubescheduler.ReservePlugin), &c.reserve}, nil
		}),
	}
}

// writeKubeconfig writes a kubeconfig for rc (the API server's loopback
// config: bearer token, self-signed CA and its server name).
func writeKubeconfig(dir string, rc *rest.Config) (string, error) {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["e2e"] = &clientcmdapi.Cluster{
		Server:                   rc.Host,
		CertificateAuthorityData: rc.TLSClientConfig.CAData,
		TLSServerName:            rc.TLSClientConfig.ServerName,
	}
	kc.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{Token: rc.BearerToken}
	kc.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e"}
	kc.CurrentContext = "e2e"
	path := filepath.Join(dir, "kubeconfig")
	return path, clientcmd.WriteToFile(*kc, path)
}

// writeSchedulerConfig copies the shipped deploy/scheduler-config.yaml with
// clientConnection.kubeconfig set (with --config, the binary reads the
// kubeconfig path from the file only) and leader election off.
func writeSchedulerConfig(dir, kubeconfig string) (string, error) {
	raw, err := os.ReadFile("../deploy/scheduler-config.yaml")
	if err != nil {
		return "", err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return "", fmt.Errorf("deploy/scheduler-config.yaml: %w", err)
	}
	conn, ok := doc["clientConnection"].(map[string]any)
	if !ok {
		return "", fmt.Errorf("deploy/scheduler-config.yaml: no clientConnection")
	}
	conn["kubeconfig"] = kubeconfig
	// app.Run's leader-election path ends the process (os.Exit) when its
	// context ends; in-process, run without it. TestShippedManifests runs
	// the binary with leader election on.
	le, ok := doc["leaderElection"].(map[string]any)
	if !ok {
		return "", fmt.Errorf("deploy/scheduler-config.yaml: no leaderElection")
	}
	le["leaderElect"] = false
	out, err := yaml.Marshal(doc)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "scheduler-config.yaml")
	return path, os.WriteFile(path, out, 0o600)
}

func e2eNode(i int) *v1.Node {
	rl := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewQuantity(int64(2+2*(i%3)), resource.DecimalSI),    // 2, 4 or 6 cores
		v1.ResourceMemory: *resource.NewQuantity(int64(8+8*(i%2))<<30, resource.BinarySI), // 8 or 16 GiB
		v1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-node-%02d", i)},
		Status:     v1.NodeStatus{Capacity: rl, Allocatable: rl},
	}
}

// e2ePod is a minimal pod; the API server defaults the rest (UID,
// restartPolicy, dnsPolicy, terminationGracePeriodSeconds, ...).
func e2ePod(i int) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-pod-%03d", i), Namespace: metav1.NamespaceDefault},
		Spec: v1.PodSpec{
			SchedulerName: "schedkit",
			Containers: []v1.Container{{
				Name:  "app",
				Image: "registry.k8s.io/pause:3.10",
				Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    *resource.NewMilliQuantity(int64(200+200*(i%5)), resource.DecimalSI), // 200m..1000m
					v1.ResourceMemory: *resource.NewQuantity(int64(512+512*(i%4))<<20, resource.BinarySI),   // 512Mi..2Gi
				}},
			}},
		},
	}
}

// TestSchedulerOnAPIServer runs the schedkit kube-scheduler — the binary's
// app.Setup and app.Run with main.go's plugins and the shipped
// configuration — against kube-apiserver v1.37.2 on an embedded etcd, both
// in-process. It creates 20 nodes and 100 pods of the schedkit profile
// through the API and checks that every pod is bound by the API server, no
// node's allocatable is exceeded, schedkit's filter, score and reserve
// ran, the ledger agrees with the bindings, the scheduler's Scheduled
// events reached the API server, and that after shutdown no goroutine of
// the test is left running.
func TestSchedulerOnAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd, kube-apiserver and kube-scheduler in-process (about 6 s once built); skipped under -short")
	}
	const nNodes, nPods = 20, 100
	start := time.Now()
	phase := start
	lap := func(what string) {
		now := time.Now()
		t.Logf("%-22s %v", what, now.Sub(phase).Round(time.Millisecond))
		phase = now
	}

	// Registered first, so it runs after every other cleanup (etcd's last).
	// healthz.LogHealthz starts a process-wide goroutine on its first
	// check, forever: start it now so that the baseline holds it (as
	// upstream's integration framework does).
	_ = healthz.LogHealthz.Check(nil)
	leakBaseline := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		// Shutdown is asynchronous in places (HTTP/2 and gRPC connections,
		// informers); give it time before calling it a leak.
		deadline := time.Now().Add(20 * time.Second)
		for {
			err := goleak.Find(leakBaseline)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("goroutines left after shutdown: %v", err)
				break
			}
			// client-go's TLS transport cache stops a transport's
			// certificate-rotation goroutines when the transport is
			// garbage-collected.
			runtime.GC()
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("%-22s %v (test total %v)", "shutdown", time.Since(phase).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	})

	// Embedded etcd on free ports in a temporary directory, stopped by a
	// cleanup of RunEtcd; its client is closed before that.
	etcd := etcdtesting.RunEtcd(t, nil)
	t.Cleanup(func() { _ = etcd.Close() })
	lap("etcd started")

	storage := storagebackend.NewDefaultConfig("/schedkit-e2e/registry", nil)
	storage.Transport.ServerList = etcd.Endpoints()
	// Admission plugins that wait for controllers this test does not run,
	// disabled as in upstream's scheduler integration tests: ServiceAccount
	// (no service-account controller: every pod would be refused) and
	// TaintNodesByCondition (every new node gets the not-ready NoSchedule
	// taint, which only the node lifecycle controller removes).
	server, err := apiservertesting.StartTestServer(t, apiservertesting.NewDefaultTestServerOptions(),
		[]string{"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition"}, storage)
	require.NoError(t, err, "starting kube-apiserver")
	t.Cleanup(server.TearDownFn)
	lap("kube-apiserver started")

	client, err := kubernetes.NewForConfig(server.ClientConfig)
	require.NoError(t, err)
	dir := t.TempDir()
	kubeconfig, err := writeKubeconfig(dir, server.ClientConfig)
	require.NoError(t, err)
	cfgPath, err := writeSchedulerConfig(dir, kubeconfig)
	require.NoError(t, err)

	// The scheduler as the binary runs it: options, --config, app.Setup
	// with main.go's plugins, app.Run. No secure port (nothing probes it).
	var c calls
	opts := options.NewOptions()
	opts.ConfigFile = cfgPath
	opts.SecureServing.BindPort = 0
	ctx, cancel := context.WithCancel(context.Background())
	cc, sched, err := app.Setup(ctx, opts, c.plugins()...)
	if err != nil {
		cancel()
		require.NoError(t, err, "app.Setup")
	}
	runDone := make(chan error, 1)
	go func() { runDone <- app.Run(ctx, cc, sched) }()
	stopScheduler := func() {
		cancel()
		select {
		case err := <-runDone:
			// Without leader election, Run returns this error once its
			// context ends; anything else is a failure.
			if err != nil && err.Error() != "finished without leader elect" {
				t.Errorf("kube-scheduler: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("kube-scheduler did not stop within 30s of cancel")
		}
		configz.Delete("componentconfig")
	}
	// Before the API server's teardown (cleanups run last-in first-out).
	t.Cleanup(stopScheduler)
	lap("kube-scheduler built")

	api := context.Background()
	nodes := map[string]*v1.Node{}
	for i := 0; i < nNodes; i++ {
		n, err := client.CoreV1().Nodes().Create(api, e2eNode(i), metav1.CreateOptions{})
		require.NoError(t, err)
		nodes[n.Name] = n
	}
	for i := 0; i < nPods; i++ {
		p, err := client.CoreV1().Pods(metav1.NamespaceDefault).Create(api, e2ePod(i), metav1.CreateOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, p.UID, "the API server set the pod's UID")
		require.Equal(t, v1.RestartPolicyAlways, p.Spec.RestartPolicy, "the API server defaulted the pod")
	}
	lap("objects created")

	var pods []v1.Pod
	bound := assert.Eventually(t, func() bool {
		list, err := client.CoreV1().Pods(metav1.NamespaceDefault).List(api, metav1.ListOptions{})
		if err != nil {
			t.Logf("listing pods: %v", err)
			return false
		}
		pods = list.Items
		n := 0
		for i := range pods {
			if pods[i].Spec.NodeName != "" {
				n++
			}
		}
		return len(pods) == nPods && n == nPods
	}, 60*time.Second, 100*time.Millisecond, "every pod bound")
	if !bound {
		for i := range pods {
			if pods[i].Spec.NodeName == "" {
				t.Logf("unbound: %s: %+v", pods[i].Name, pods[i].Status.Conditions)
				break
			}
		}
		t.FailNow()
	}
	lap("all pods bound")

	// Bindings respect allocatable: sum of requests (upstream's helper) per node.
	type use struct{ milliCPU, memory, pods int64 }
	used := map[string]*use{}
	for i := range pods {
		p := &pods[i]
		n, ok := nodes[p.Spec.NodeName]
		require.True(t, ok, "pod %s bound to unknown node %q", p.Name, p.Spec.NodeName)
		u := used[n.Name]
		if u == nil {
			u = &use{}
			used[n.Name] = u
		}
		req := resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{})
		u.milliCPU += req.Cpu().MilliValue()
		u.memory += req.Memory().Value()
		u.pods++
	}
	for name, u := range used {
		alloc := nodes[name].Status.Allocatable
		assert.LessOrEqual(t, u.milliCPU, alloc.Cpu().MilliValue(), "cpu on %s", name)
		assert.LessOrEqual(t, u.memory, alloc.Memory().Value(), "memory on %s", name)
		assert.LessOrEqual(t, u.pods, alloc.Pods().Value(), "pods on %s", name)
	}
	t.Logf("%d pods on %d of %d nodes", len(pods), len(used), nNodes)

	// schedkit's plugins ran: a score per candidate node, a reserve per pod.
	assert.Positive(t, c.filter.Load(), "SchedkitNodeResourcesFit.Filter called")
	assert.Positive(t, c.score.Load(), "SchedkitScore.Score called")
	assert.GreaterOrEqual(t, c.reserve.Load(), int64(nPods), "SchedkitReserve.Reserve called for every pod")
	res := c.res.Load()
	require.NotNil(t, res, "SchedkitReserve was built")
	assert.Eventually(t, func() bool {
		for i := range pods {
			ph, node, ok := res.Ledger().PodPhase(snapshot.KeyOf(&pods[i]))
			if !ok || node != pods[i].Spec.NodeName || (ph != reserve.Confirmed && ph != reserve.Bound) {
				return false
			}
		}
		return true
	}, 10*time.Second, 50*time.Millisecond, "the ledger holds every pod on the node it is bound to")

	// The scheduler's events went through the real client to the API server.
	assert.Eventually(t, func() bool {
		evs, err := client.EventsV1().Events(metav1.NamespaceDefault).List(api, metav1.ListOptions{})
		if err != nil {
			return false
		}
		scheduled := map[string]bool{}
		for _, e := range evs.Items {
			if e.Reason == "Scheduled" && e.Regarding.Kind == "Pod" {
				scheduled[e.Regarding.Name] = true
			}
		}
		return len(scheduled) == nPods
	}, 30*time.Second, 200*time.Millisecond, "a Scheduled event per pod")
	lap("checked")
	t.Logf("filter %d, score %d, reserve %d calls", c.filter.Load(), c.score.Load(), c.reserve.Load())
}
