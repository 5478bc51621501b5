// Package apiserver holds the end-to-end test of the schedkit
// kube-scheduler against a real kube-apiserver: an embedded etcd
// (go.etcd.io/etcd/server/v3/embed, via k8s.io/apiserver's etcd3
// testserver), kube-apiserver v1.37.2 started in-process by upstream's
// cmd/kube-apiserver/app/testing, and the scheduler built by the binary's
// own app.Setup/app.Run with schedkit's plugins, talking to the API server
// through a kubeconfig.
//
// The package has no code of its own: everything is in the test, so only
// `go test` (and `go vet`) build kube-apiserver. The test skips under
// -short.
package apiserver
