package load_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/schedkit/schedkit/snapshot/load"
)

// Reading the output of `kubectl get nodes,pods,svc -A -o yaml`: the List is
// unpacked, the Service kept in Others for the Cache.
func ExampleRead() {
	objs, err := load.Read(strings.NewReader(kubectlOutput), "cluster.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, n := range objs.Nodes {
		fmt.Printf("node %s: %s CPU, %d pods\n", n.Name, n.Status.Allocatable.Cpu(), n.Status.Allocatable.Pods().Value())
	}
	for _, p := range objs.Pods {
		fmt.Printf("pod %s/%s on %s requests %s CPU\n", p.Namespace, p.Name, p.Spec.NodeName, p.Spec.Containers[0].Resources.Requests.Cpu())
	}
	for _, o := range objs.Others {
		fmt.Printf("other %s\n", o.GetObjectKind().GroupVersionKind().Kind)
	}
	for gvk, n := range objs.Skipped {
		fmt.Printf("skipped %d %s\n", n, gvk.Kind)
	}
	// Output:
	// node kind-control-plane: 8 CPU, 110 pods
	// pod kube-system/coredns-7db6d8ff4d-2xk8q on kind-control-plane requests 100m CPU
	// other Service
}

// Errors say where the problem is and wrap a sentinel.
func ExampleRead_error() {
	const in = `apiVersion: v1
kind: Node
metadata:
  name: n1
---
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: main
    resources:
      requests:
        memory: -64Mi
`
	_, err := load.Read(strings.NewReader(in), "cluster.yaml")
	fmt.Println(err)
	fmt.Println(errors.Is(err, load.ErrNegativeQuantity))

	var e *load.Error
	if errors.As(err, &e) {
		fmt.Printf("line %d, %s %s, field %s\n", e.Line, e.Kind, e.Name, e.Field)
	}
	// Output:
	// cluster.yaml:15: document 2: Pod "default/web": spec.containers[0].resources.requests[memory]: load: negative quantity -64Mi
	// true
	// line 15, Pod web, field spec.containers[0].resources.requests[memory]
}
