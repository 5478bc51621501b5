package parity

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
)

// IPAPlugin builds upstream's InterPodAffinity with v1 args (scheme
// defaulting, then conversion, as a KubeSchedulerConfiguration's
// pluginConfig); nil args are the defaults (hardPodAffinityWeight 1). Its
// namespace lister reads the handle's informer store, which
// [SpreadUpstream.LoadNamespaces] fills.
func (u *SpreadUpstream) IPAPlugin(ctx context.Context, args *configv1.InterPodAffinityArgs) (fwk.Plugin, error) {
	if args == nil {
		args = &configv1.InterPodAffinityArgs{}
	}
	scheme.Scheme.Default(args)
	in := &config.InterPodAffinityArgs{}
	if err := scheme.Scheme.Convert(args, in, nil); err != nil {
		return nil, fmt.Errorf("parity: converting InterPodAffinityArgs: %w", err)
	}
	return u.registry[names.InterPodAffinity](ctx, in, u.handle)
}

// LoadNamespaces replaces the namespace informer store's contents.
func (u *SpreadUpstream) LoadNamespaces(nss []*v1.Namespace) error {
	return u.factory.Core().V1().Namespaces().Informer().GetIndexer().Replace(anys(nss), "")
}
