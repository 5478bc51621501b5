// Package deploy holds the manifests that run the schedkit kube-scheduler
// in a cluster (manifests.yaml) and its configuration
// (scheduler-config.yaml), and tests that check them without a cluster:
// the ConfigMap carries scheduler-config.yaml byte for byte, the RBAC
// covers the leader-election Lease the configuration names, and the Pod
// passes Pod Security "restricted" as upstream's own admission evaluates
// it. The apiserver package applies the manifests to a real API server.
//
// [Objects] reads manifests.yaml for those tests.
package deploy

import (
	"bytes"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// Object is one document of a manifest file: its kind and name, and the
// raw YAML to decode into the typed object.
type Object struct {
	APIVersion, Kind, Namespace, Name string
	Raw                               []byte
}

// Objects reads the YAML documents of a manifest file (separated by lines
// of "---"), in file order; empty documents are left out. An error names
// the file and the document's position.
func Objects(path string) ([]Object, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []Object
	for i, doc := range bytes.Split(raw, []byte("\n---\n")) {
		doc = append(doc, '\n') // the split took the document's last line break
		var meta struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i+1, err)
		}
		if meta.Kind == "" {
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			return nil, fmt.Errorf("%s: document %d: no kind", path, i+1)
		}
		out = append(out, Object{APIVersion: meta.APIVersion, Kind: meta.Kind, Namespace: meta.Metadata.Namespace, Name: meta.Metadata.Name, Raw: doc})
	}
	return out, nil
}

func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for line := range bytes.SplitSeq(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			b.Write(line)
		}
	}
	return b.Bytes()
}
