// Command myscheduler is the real kube-scheduler (v1.37.2) with two
// plugins written for it — PreferLabel (a Score plugin) and LicenseBudget
// (a capacity rule, as a Filter), in package plugins — beside schedkit's
// reservation ledger. See README.md for the walk-through:
//
//	go build -o /tmp/myscheduler .
//	sed "s|kubeconfig: \"\"|kubeconfig: $HOME/.kube/config|" scheduler-config.yaml > /tmp/myscheduler.yaml && /tmp/myscheduler --config /tmp/myscheduler.yaml --secure-port=0
//
// Pods opt in with spec.schedulerName: myscheduler.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // JSON log format, as upstream's command
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/schedkit/schedkit/examples/kube-scheduler/myscheduler/plugins"
	"github.com/schedkit/schedkit/framework/kubescheduler"
)

// Options are the plugins this scheduler adds to upstream's registry.
func Options() []app.Option {
	return []app.Option{
		app.WithPlugin(plugins.PreferLabelName, plugins.NewPreferLabel),
		app.WithPlugin(plugins.LicenseBudgetName, plugins.NewLicenseBudget),
		app.WithPlugin(kubescheduler.ReserveName, kubescheduler.NewSchedkitReserve),
	}
}

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand(Options()...)))
}
