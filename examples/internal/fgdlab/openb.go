package fgdlab

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Node is one row of openb_node_list_gpu_node.csv.
type Node struct {
	Name      string
	MilliCPU  int64
	MemoryMiB int64
	GPUs      int
	Model     string
}

// Pod is one row of an openb_pod_list_*.csv file (only the columns the
// experiment uses).
type Pod struct {
	Name      string
	MilliCPU  int64
	MemoryMiB int64
	NumGPU    int
	MilliGPU  int64
	GPUSpec   string
}

// ErrFormat is wrapped by the readers for malformed input.
var ErrFormat = errors.New("fgdlab: malformed openb CSV")

// readTable reads a CSV with a header and returns, per row, the fields of
// the wanted columns in order. Optional columns missing from the header
// yield "".
func readTable(r io.Reader, want []string, optional map[string]bool) ([][]string, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	col := make([]int, len(want))
	for i, name := range want {
		col[i] = -1
		for j, h := range header {
			if strings.TrimSpace(h) == name {
				col[i] = j
			}
		}
		if col[i] < 0 && !optional[name] {
			return nil, fmt.Errorf("%w: no column %q", ErrFormat, name)
		}
	}
	var rows [][]string
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrFormat, line, err)
		}
		row := make([]string, len(want))
		for i, c := range col {
			if c >= 0 {
				row[i] = rec[c]
			}
		}
		rows = append(rows, row)
	}
}

func parseInt(s, name, column string) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%w: %s: %s = %q, want an integer >= 0", ErrFormat, name, column, s)
	}
	return v, nil
}

// ReadNodes reads an openb node list (columns sn, cpu_milli, memory_mib, gpu,
// model).
func ReadNodes(r io.Reader) ([]Node, error) {
	rows, err := readTable(r, []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}, nil)
	if err != nil {
		return nil, err
	}
	nodes := make([]Node, 0, len(rows))
	for _, row := range rows {
		n := Node{Name: row[0], Model: row[4]}
		var gpus int64
		if n.MilliCPU, err = parseInt(row[1], n.Name, "cpu_milli"); err != nil {
			return nil, err
		}
		if n.MemoryMiB, err = parseInt(row[2], n.Name, "memory_mib"); err != nil {
			return nil, err
		}
		if gpus, err = parseInt(row[3], n.Name, "gpu"); err != nil {
			return nil, err
		}
		n.GPUs = int(gpus)
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// ReadPods reads an openb pod list (columns name, cpu_milli, memory_mib,
// num_gpu, gpu_milli and the optional gpu_spec).
func ReadPods(r io.Reader) ([]Pod, error) {
	rows, err := readTable(r, []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec"},
		map[string]bool{"gpu_spec": true})
	if err != nil {
		return nil, err
	}
	pods := make([]Pod, 0, len(rows))
	for _, row := range rows {
		p := Pod{Name: row[0], GPUSpec: row[5]}
		var num int64
		if p.MilliCPU, err = parseInt(row[1], p.Name, "cpu_milli"); err != nil {
			return nil, err
		}
		if p.MemoryMiB, err = parseInt(row[2], p.Name, "memory_mib"); err != nil {
			return nil, err
		}
		if num, err = parseInt(row[3], p.Name, "num_gpu"); err != nil {
			return nil, err
		}
		if p.MilliGPU, err = parseInt(row[4], p.Name, "gpu_milli"); err != nil {
			return nil, err
		}
		p.NumGPU = int(num)
		pods = append(pods, p)
	}
	return pods, nil
}
