// Command kube-scheduler is the real kube-scheduler (v1.37.2) with
// schedkit's plugins registered: SchedkitScore (a schedkit scorer,
// configured by pluginConfig), SchedkitNodeResourcesFit (schedkit's fit
// filter) and SchedkitReserve (the reservation ledger). Every flag of the
// upstream command works; deploy/scheduler-config.yaml is a configuration
// that keeps the default profile and adds a second one, schedulerName:
// schedkit, and deploy/manifests.yaml runs it in a cluster:
//
//	go build -o kube-scheduler . && ./kube-scheduler --config deploy/scheduler-config.yaml
//
// (outside a cluster, set clientConnection.kubeconfig in the file: with
// --config, the --kubeconfig flag is ignored).
//
// Pods choose the profile with spec.schedulerName: schedkit.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // JSON log format, as upstream's command
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/schedkit/schedkit/framework/kubescheduler"
)

func main() {
	cmd := app.NewSchedulerCommand(
		app.WithPlugin(kubescheduler.ScoreName, kubescheduler.New),
		app.WithPlugin(kubescheduler.FitName, kubescheduler.NewFit),
		app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewReserve),
	)
	os.Exit(cli.Run(cmd))
}
