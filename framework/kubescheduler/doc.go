// Package kubescheduler adapts schedkit scorers, filters and the reservation
// ledger to the k8s.io/kube-scheduler/framework plugin interfaces.
package kubescheduler
