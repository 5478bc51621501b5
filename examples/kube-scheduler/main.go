// Command kube-scheduler is the real kube-scheduler (v1.37.2) with
// schedkit's plugins registered: SchedkitScore (a schedkit scorer,
// configured by pluginConfig), SchedkitNodeResourcesFit (schedkit's fit
// filter) and SchedkitReserve (the reservation ledger). Every flag of the
// upstream command works. deploy/scheduler-config.yaml configures one
// profile, schedulerName: schedkit (pods opt in with spec.schedulerName:
// schedkit), beside the cluster's own scheduler; deploy/manifests.yaml runs
// it in a cluster. Outside a cluster, give it a kubeconfig through the
// file's clientConnection.kubeconfig (with --config, upstream ignores the
// --kubeconfig flag):
//
//	go build -o kube-scheduler .
//	sed "s|kubeconfig: \"\"|kubeconfig: $HOME/.kube/config|" deploy/scheduler-config.yaml > /tmp/schedkit.yaml && ./kube-scheduler --config /tmp/schedkit.yaml
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
		app.WithPlugin(kubescheduler.ScoreName, kubescheduler.NewSchedkitScore),
		app.WithPlugin(kubescheduler.FitName, kubescheduler.NewSchedkitFit),
		app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewSchedkitReserve),
	)
	os.Exit(cli.Run(cmd))
}
