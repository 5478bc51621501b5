package main

import (
	"fmt"
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
	p.Title.Text = fmt.Sprintf("%s allocation vs arrived %s demand", r.Axis, r.Axis)
	p.X.Label.Text = fmt.Sprintf("arrived %s demand (%% of cluster capacity)", r.Axis)
	p.Y.Label.Text = fmt.Sprintf("%s allocation ratio (%%)", r.Axis)
	p.Y.Min, p.Y.Max = 0, 100
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.Left = true
	for i, s := range r.Summaries {
		var xys plotter.XYs
		for x, y := range s.Curve {
			if y != nil {
				xys = append(xys, plotter.XY{X: float64(x), Y: *y})
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
	p.Legend.XOffs = vg.Points(10)
	p.Legend.YOffs = -vg.Points(10)
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, path); err != nil {
		return fmt.Errorf("writing plot: %w", err)
	}
	return nil
}
