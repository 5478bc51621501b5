package framework

import (
	"fmt"
	"strings"

	"github.com/schedkit/schedkit/snapshot"
)

// filterError names the filter and the pod in err, a PreFilter error,
// once: the built-in filters' errors already read "framework: <filter>:
// pod <key>: ..." and are returned as they are; others get the prefix
// "framework: filter <filter>: pod <key>: ". O(len(err.Error())).
func filterError(f Filter, pod *snapshot.PodInfo, err error) error {
	if strings.HasPrefix(err.Error(), "framework: "+f.Name()+": pod "+pod.Key().String()+": ") {
		return err
	}
	return fmt.Errorf("framework: filter %s: pod %s: %w", f.Name(), pod.Key(), err)
}
