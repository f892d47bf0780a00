package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// With hybrid-clock tokens an epoch is microseconds since 1970, about
// 1.7e15: sixteen digits. A float format would print 1.7329987654321e+15
// and a lane name with it would run into the plot. Every output shows the
// epoch in full, and the SVG puts it on a line of its own under the name.
func TestSixteenDigitEpochsShowInFullInTheTableTheJSONAndTheSVG(t *testing.T) {
	const old, next = int64(1732998765432100), int64(1732998767000001)
	row := newRow("leader-election", "leader election")
	row.add("fix", fmt.Sprintf("old leader's write refused (epoch %d < %d)", old, next),
		map[string]any{"old_epoch": old, "new_epoch": next})
	tl := &Timeline{ID: "split-brain", EndMs: 100}
	tl.lane("old leader, pid 4242", fmt.Sprintf("epoch %d", old))
	tl.lane("new leader, this process", fmt.Sprintf("epoch %d", next))
	rep := &Report{OK: true, Rows: []*Row{row}, Timelines: []*Timeline{tl}}

	var table bytes.Buffer
	printTable(&table, rep)
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	svg := renderSVG(rep.Timelines)
	for what, out := range map[string]string{"table": table.String(), "json": string(js), "svg": svg} {
		for _, epoch := range []int64{old, next} {
			if !strings.Contains(out, fmt.Sprint(epoch)) {
				t.Errorf("%s does not show epoch %d in full", what, epoch)
			}
		}
		if strings.Contains(out, "e+15") || strings.Contains(out, "E+15") {
			t.Errorf("%s shows an epoch in float notation", what)
		}
	}
	for _, epoch := range []int64{old, next} {
		want := fmt.Sprintf(`fill="#555">epoch %d</text>`, epoch)
		if !strings.Contains(svg, want) {
			t.Errorf("svg: epoch %d is not on a line of its own (%s)", epoch, want)
		}
	}
	// Lane names start at x=20 and must end before the plot at svgPlotLeft;
	// 13px text is at most about 8px a character.
	for _, l := range tl.Lanes {
		if w := 20 + 8*float64(len(l.Name)); w > svgPlotLeft {
			t.Errorf("lane name %q would reach x=%.0f, past the plot's left edge %.0f", l.Name, w, svgPlotLeft)
		}
	}
}
