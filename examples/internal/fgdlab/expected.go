package fgdlab

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrFormat is wrapped by ReadExpected for malformed input.
var ErrFormat = errors.New("fgdlab: malformed results CSV")

// Expected holds the authors' published curves for one trace:
// Expected[policy][seed], policy as in Policies.
type Expected map[string]map[int64]Curve

// ReadExpected reads analysis_allo_discrete.csv (columns workload,
// sc_policy, tune, seed, total_gpus, 0..130) and keeps the rows of the
// given workload (e.g. "openb_pod_list_default") and tune ratio. Empty
// cells become NaN.
func ReadExpected(r io.Reader, workload string, tune float64) (Expected, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrFormat, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(h)] = i
	}
	for _, name := range []string{"workload", "sc_policy", "tune", "seed", "0", strconv.Itoa(MaxX)} {
		if _, ok := col[name]; !ok {
			return nil, fmt.Errorf("%w: no column %q", ErrFormat, name)
		}
	}
	out := Expected{}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: %v", ErrFormat, line, err)
		}
		if rec[col["workload"]] != workload {
			continue
		}
		tn, err := strconv.ParseFloat(rec[col["tune"]], 64)
		if err != nil || tn != tune {
			continue
		}
		policy := rec[col["sc_policy"]]
		if i := strings.IndexByte(policy, '-'); i >= 0 {
			policy = policy[i+1:] // "06-FGD" -> "FGD"
		}
		seed, err := strconv.ParseInt(rec[col["seed"]], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: seed %q", ErrFormat, line, rec[col["seed"]])
		}
		var c Curve
		for x := 0; x <= MaxX; x++ {
			c[x] = math.NaN()
			if s := rec[col[strconv.Itoa(x)]]; s != "" {
				if c[x], err = strconv.ParseFloat(s, 64); err != nil {
					return nil, fmt.Errorf("%w: line %d: column %d = %q", ErrFormat, line, x, s)
				}
			}
		}
		if out[policy] == nil {
			out[policy] = map[int64]Curve{}
		}
		out[policy][seed] = c
	}
}
