package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plotFormats are the file extensions -svg accepts.
var plotFormats = []string{".svg", ".png", ".pdf"}

func plotFormatOK(path string) bool {
	ext := strings.ToLower(filepath.Ext(path))
	for _, f := range plotFormats {
		if ext == f {
			return true
		}
	}
	return false
}

// writePlot draws the FGD paper's Fig. 9(a) axes — allocation ratio
// against arrived demand, both in percent of the cluster's capacity — with
// one line per policy, and saves it in the format of path's extension.
func writePlot(path string, r *report) error {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s allocation vs arrived demand", r.Axis)
	p.X.Label.Text = fmt.Sprintf("arrived %s demand (%% of capacity)", r.Axis)
	p.Y.Label.Text = fmt.Sprintf("%s allocation ratio (%%)", r.Axis)
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	for i, s := range r.Summaries {
		var xys plotter.XYs
		for x, y := range s.Curve {
			if y != nil {
				xys = append(xys, plotter.XY{X: float64(x), Y: 100 * *y})
			}
		}
		if len(xys) == 0 {
			continue
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return fmt.Errorf("plot %s: %w", s.Policy, err)
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i / 4) // solid, then dashed, dotted ...: colours repeat
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(s.Policy, line)
	}
	// After the lines: Add widens the axes to the data.
	xr, yr, zoomed := plotRange(r.Summaries)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xr[0], xr[1], yr[0], yr[1]
	if zoomed {
		p.X.Label.Text += fmt.Sprintf(", from %g %%: below, alike", xr[0])
	}
	// Room for the last tick label in a viewer's font, often wider than
	// the one gonum measures.
	p.X.Max += 0.04 * (p.X.Max - p.X.Min)
	p.Legend.XOffs = vg.Points(10)
	p.Legend.YOffs = -vg.Points(10)
	// p.Save would open path with os.Create (see createOut).
	w, err := p.WriterTo(7*vg.Inch, 4.5*vg.Inch, strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."))
	if err != nil {
		return fmt.Errorf("writing plot: %w", err)
	}
	f, err := createOut(path)
	if err != nil {
		return fmt.Errorf("writing plot: %w", err)
	}
	if _, err := w.WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("writing plot: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing plot: %w", err)
	}
	return nil
}

// plotRange scales the axes (percent) to the curves (ratios): x from where the policies' curves
// first differ by more than half a percentage point (less a margin of a
// tenth of the range, rounded down to 10 %) to the last arrival, y over
// the values in that window rounded out to 5 %. Below the point where
// they part all curves are the diagonal, which says nothing. With a
// single curve, or curves that never part, the whole range from 0.
// zoomed reports whether x starts above 0.
func plotRange(sums []*summary) (x, y [2]float64, zoomed bool) {
	maxX := 0
	for _, s := range sums {
		maxX = max(maxX, len(s.Curve)-1)
	}
	part := -1
	for i := 0; i <= maxX && part < 0; i++ {
		lo, hi, n := math.Inf(1), math.Inf(-1), 0
		for _, s := range sums {
			if i < len(s.Curve) && s.Curve[i] != nil {
				lo, hi, n = min(lo, 100**s.Curve[i]), max(hi, 100**s.Curve[i]), n+1
			}
		}
		if n > 1 && hi-lo > 0.5 {
			part = i
		}
	}
	x = [2]float64{0, float64(max(maxX, 1))}
	if part > 0 {
		x[0] = math.Floor((float64(part)-0.1*float64(maxX))/10) * 10
		x[0] = max(x[0], 0)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range sums {
		for i, v := range s.Curve {
			if v != nil && float64(i) >= x[0] {
				lo, hi = min(lo, 100**v), max(hi, 100**v)
			}
		}
	}
	if math.IsInf(lo, 0) {
		return x, [2]float64{0, 100}, false
	}
	y = [2]float64{max(math.Floor(lo/5)*5, 0), min(math.Ceil(hi/5)*5, 100)}
	if x[0] == 0 {
		y[0] = 0
	}
	if y[1] <= y[0] {
		y[1] = y[0] + 5
	}
	return x, y, x[0] > 0
}
