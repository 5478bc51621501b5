module github.com/schedkit/schedkit/framework/kubescheduler

go 1.26.0

require (
	github.com/schedkit/schedkit v0.0.0
	k8s.io/kube-scheduler v0.37.2
)

replace github.com/schedkit/schedkit => ../..
