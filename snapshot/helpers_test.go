package snapshot_test

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/schedkit/schedkit/snapshot"
)

func metav1ObjectMeta(k snapshot.PodKey) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}
}
