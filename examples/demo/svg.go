package main

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
)

// The drawing's geometry, in SVG user units (pixels).
const (
	svgWidth     = 1000.0
	svgPlotLeft  = 250.0 // lane names go to the left of it
	svgPlotRight = svgWidth - 30
	svgCharW     = 6.2 // average width of a character at 11px, for label layout
)

var svgColors = map[string]string{
	spanLease:     "#4c78a8",
	spanBelieves:  "#f58518",
	spanFrozen:    "#7f7f7f",
	markAccepted:  "#2ca02c",
	markClobbered: "#d62728",
	markRefused:   "#d62728",
	markEvent:     "#222222",
}

// writeSVG draws every timeline, one panel under the other.
func writeSVG(path string, timelines []*Timeline) error {
	return os.WriteFile(path, []byte(renderSVG(timelines)), 0o644)
}

func renderSVG(timelines []*Timeline) string {
	var body strings.Builder
	y := 20.0
	for _, tl := range timelines {
		y = drawPanel(&body, tl, y) + 30
	}
	y = drawLegend(&body, y)
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="DejaVu Sans, Helvetica, Arial, sans-serif">
<defs>
<pattern id="hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)">
<rect width="6" height="6" fill="#e8e8e8"/><line x1="0" y1="0" x2="0" y2="6" stroke="#7f7f7f" stroke-width="3"/>
</pattern>
</defs>
<rect width="100%%" height="100%%" fill="white"/>
`, svgWidth, y+10, svgWidth, y+10)
	b.WriteString(body.String())
	b.WriteString("</svg>\n")
	return b.String()
}

// drawPanel draws one timeline from y down and returns where it ended.
func drawPanel(b *strings.Builder, tl *Timeline, y float64) float64 {
	end := tl.EndMs
	for _, l := range tl.Lanes {
		for _, s := range l.Spans {
			end = math.Max(end, s.ToMs)
		}
	}
	end = math.Max(end, 1)
	scale := end * 1.04 // room on the right for the last mark
	x := func(t float64) float64 { return svgPlotLeft + (svgPlotRight-svgPlotLeft)*math.Max(0, t)/scale }

	fmt.Fprintf(b, `<text x="20" y="%.1f" font-size="16" font-weight="bold">%s</text>`+"\n", y+4, esc(tl.Title))
	y += 22
	for _, line := range wrap(tl.Caption, 150) {
		fmt.Fprintf(b, `<text x="20" y="%.1f" font-size="12" fill="#444">%s</text>`+"\n", y, esc(line))
		y += 15
	}
	y += 18 // room for the window's label
	top := y
	// A lane is taller when it has a frozen row under its bars.
	heights := make([]float64, len(tl.Lanes))
	bottom := top
	for i, l := range tl.Lanes {
		heights[i] = 82
		if l.frozen() {
			heights[i] = 100
		}
		bottom += heights[i]
	}

	for _, w := range tl.Windows {
		x0, x1 := x(w.FromMs), x(w.ToMs)
		fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#d62728" fill-opacity="0.12" stroke="#d62728" stroke-dasharray="4 3"/>`+"\n",
			x0, top-4, math.Max(x1-x0, 1), bottom-top+4)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="12" fill="#b22222" text-anchor="middle">%s (%s)</text>`+"\n",
			(x0+x1)/2, top-8, esc(w.Label), esc(fmtFloatMs(w.ToMs-w.FromMs)))
	}

	ly := top
	for i, l := range tl.Lanes {
		if i > 0 {
			fmt.Fprintf(b, `<line x1="20" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", ly-2, svgPlotRight, ly-2)
		}
		fmt.Fprintf(b, `<text x="20" y="%.1f" font-size="13">%s</text>`+"\n", ly+16, esc(l.Name))
		if l.Detail != "" {
			fmt.Fprintf(b, `<text x="20" y="%.1f" font-size="11" fill="#555">%s</text>`+"\n", ly+31, esc(l.Detail))
		}
		for _, s := range l.Spans {
			drawSpan(b, s, x, ly)
		}
		drawMarks(b, l.Marks, x, ly, ly+heights[i]-28)
		ly += heights[i]
	}
	return drawAxis(b, end, x, bottom+4)
}

func drawSpan(b *strings.Builder, s Span, x func(float64) float64, ly float64) {
	x0, x1 := x(s.FromMs), x(s.ToMs)
	w := math.Max(x1-x0, 1)
	var by, h float64
	fill, textFill := svgColors[s.Kind], "white"
	switch s.Kind {
	case spanLease:
		by, h = ly+4, 16
	case spanBelieves:
		by, h = ly+23, 12
		textFill = "#222"
	case spanFrozen:
		by, h = ly+38, 14
		fill, textFill = "url(#hatch)", "#222"
	}
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" rx="2"><title>%s: %s to %s</title></rect>`+"\n",
		x0, by, w, h, fill, esc(s.Label), fmtFloatMs(s.FromMs), fmtFloatMs(s.ToMs))
	if s.Label == "" || float64(len(s.Label))*svgCharW+8 > w {
		return
	}
	// Labels sit at the bar's right end: marks crowd its start.
	switch s.Kind {
	case spanFrozen:
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" font-weight="bold" fill="%s" text-anchor="middle" stroke="white" stroke-width="3" paint-order="stroke">%s</text>`+"\n",
			(x0+x1)/2, by+h-3, textFill, esc(s.Label))
	default:
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" fill="%s" text-anchor="end">%s</text>`+"\n", x1-4, by+h-3.5, textFill, esc(s.Label))
	}
}

// drawMarks draws a lane's marks and lays out their labels under the bars,
// moving a label down a row when it would overlap the one before.
func drawMarks(b *strings.Builder, marks []Mark, x func(float64) float64, ly, labelY float64) {
	for _, m := range marks {
		mx, c := x(m.AtMs), svgColors[m.Kind]
		tip := fmt.Sprintf("<title>%s %s at %s</title>", esc(m.Kind), esc(m.Label), fmtFloatMs(m.AtMs))
		switch {
		case m.Kind == markAccepted && m.Label == "":
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5">%s</line>`+"\n", mx, ly+2, mx, ly+22, c, tip)
		case m.Kind == markAccepted:
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="6" fill="%s" stroke="white" stroke-width="1.5">%s</circle>`+"\n", mx, ly+12, c, tip)
		case m.Kind == markClobbered:
			fmt.Fprintf(b, `<path d="M%.1f %.1f l7 7 l-7 7 l-7 -7 z" fill="%s" stroke="white" stroke-width="1.5">%s</path>`+"\n", mx, ly+5, c, tip)
		case m.Kind == markRefused:
			fmt.Fprintf(b, `<g stroke="%s" stroke-width="3.5" stroke-linecap="round"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>%s</g>`+"\n",
				c, mx-6, ly+6, mx+6, ly+18, mx-6, ly+18, mx+6, ly+6, tip)
		default: // an event: a line through the bars and a pointer under them
			fmt.Fprintf(b, `<g fill="%s" stroke="%s"><line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke-width="1.5"/><path d="M%.1f %.1f l4.5 7 l-9 0 z" stroke="none"/>%s</g>`+"\n",
				c, c, mx, ly+2, mx, labelY-18, mx, labelY-18, tip)
		}
	}
	labeled := make([]Mark, 0, len(marks))
	for _, m := range marks {
		if m.Label != "" {
			labeled = append(labeled, m)
		}
	}
	sort.SliceStable(labeled, func(i, j int) bool { return labeled[i].AtMs < labeled[j].AtMs })
	var rowEnds [3]float64
	for _, m := range labeled {
		text := m.Label
		w := float64(len(text)) * svgCharW
		lx := math.Min(math.Max(x(m.AtMs)-w/2, svgPlotLeft-20), svgWidth-w-4)
		row := 0
		for row < len(rowEnds)-1 && rowEnds[row] > lx-4 && rowEnds[row] > 0 {
			row++
		}
		rowEnds[row] = lx + w
		color := svgColors[m.Kind]
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11" fill="%s">%s</text>`+"\n", lx, labelY+11*float64(row), color, esc(text))
	}
}

// drawAxis draws the time axis at y and returns the y under it.
func drawAxis(b *strings.Builder, end float64, x func(float64) float64, y float64) float64 {
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>`+"\n", svgPlotLeft, y, svgPlotRight, y)
	step := niceStep(end / 8)
	for t := 0.0; t <= end+step/1000; t += step {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/>`+"\n", x(t), y, x(t), y+4)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" fill="#444" text-anchor="middle">%.0f</text>`+"\n", x(t), y+15, t)
	}
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="10" fill="#444" text-anchor="end">ms</text>`+"\n", svgPlotLeft-8, y+15)
	return y + 20
}

func drawLegend(b *strings.Builder, y float64) float64 {
	x := 20.0
	item := func(shape, label string) {
		if x+22+float64(len(label))*svgCharW > svgWidth-20 {
			x, y = 20, y+20
		}
		fmt.Fprintf(b, shape+"\n", x, y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="11">%s</text>`+"\n", x+22, y+11, esc(label))
		x += 22 + float64(len(label))*svgCharW + 18
	}
	item(`<rect x="%.1f" y="%.1f" width="16" height="12" fill="#4c78a8"/>`, "lease held on the server")
	item(`<rect x="%.1f" y="%.1f" width="16" height="12" fill="#f58518"/>`, "acts as holder/leader")
	item(`<rect x="%.1f" y="%.1f" width="16" height="12" fill="url(#hatch)"/>`, "process frozen")
	item(`<circle cx="%.1f" cy="%.1f" r="6" fill="#2ca02c" transform="translate(8 6)"/>`, "write accepted")
	item(`<path d="M%.1f %.1f m8 -1 l7 7 l-7 7 l-7 -7 z" fill="#d62728"/>`, "stale write accepted")
	item(`<g stroke="#d62728" stroke-width="3.5" stroke-linecap="round" transform="translate(%.1f %.1f)"><line x1="2" y1="0" x2="14" y2="12"/><line x1="2" y1="12" x2="14" y2="0"/></g>`, "write refused")
	item(`<rect x="%.1f" y="%.1f" width="16" height="12" fill="#d62728" fill-opacity="0.15" stroke="#d62728" stroke-dasharray="4 3"/>`, "stale window")
	return y + 24
}

// niceStep rounds a raw axis step to 1, 2, 2.5 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

func fmtFloatMs(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}

// wrap breaks s into lines of at most n characters at spaces.
func wrap(s string, n int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		if line != "" && len(line)+1+len(w) > n {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (l *Lane) frozen() bool {
	for _, s := range l.Spans {
		if s.Kind == spanFrozen {
			return true
		}
	}
	return false
}
