package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is everything one run measured. -json writes it as is.
type Report struct {
	Server    string      `json:"server"`
	Started   time.Time   `json:"started"`
	ElapsedMs float64     `json:"elapsed_ms"`
	OK        bool        `json:"ok"`
	Rows      []*Row      `json:"rows"`
	Timelines []*Timeline `json:"timelines"`
}

// Row is one line of the table: a failure reproduced next to its fix.
type Row struct {
	ID        string   `json:"id"`
	Scenario  string   `json:"scenario"`
	Cells     []Cell   `json:"cells"`
	OK        bool     `json:"ok"`
	Problems  []string `json:"problems,omitempty"`
	ElapsedMs float64  `json:"elapsed_ms"`
}

// Cell is one measured result of a row. Role says which side it is on:
// "failure" (the broken version, which must show the failure), "fix" (the
// primitive, which must hold), or "measure" (a figure to read).
type Cell struct {
	Role    string         `json:"role"`
	Text    string         `json:"text"`
	Figures map[string]any `json:"figures"`
}

func newRow(id, scenario string) *Row {
	return &Row{ID: id, Scenario: scenario, OK: true}
}

func (r *Row) add(role, text string, figures map[string]any) {
	r.Cells = append(r.Cells, Cell{Role: role, Text: text, Figures: figures})
}

// expect records a problem when cond is false: the failure did not show, or
// the fix did not hold.
func (r *Row) expect(cond bool, format string, args ...any) {
	if !cond {
		r.OK = false
		r.Problems = append(r.Problems, fmt.Sprintf(format, args...))
	}
}

// fail marks the row failed by an error that stopped its scenario.
func (r *Row) fail(err error) {
	r.OK = false
	r.Problems = append(r.Problems, err.Error())
}

// Text returns the row's cells as one line, separated by " | ".
func (r *Row) Text() string {
	parts := make([]string, len(r.Cells))
	for i, c := range r.Cells {
		parts[i] = c.Text
	}
	return strings.Join(parts, " | ")
}

// printTable writes the report as a table a person reads.
func printTable(w io.Writer, rep *Report) {
	fmt.Fprintf(w, "redis-primitives demo: %s\n\n", rep.Server)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tSCENARIO\tMEASURED (failure | fix)")
	for _, r := range rep.Rows {
		mark := "ok"
		if !r.OK {
			mark = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", mark, r.Scenario, r.Text())
		for _, p := range r.Problems {
			fmt.Fprintf(tw, "\t\t  ^ %s\n", p)
		}
	}
	_ = tw.Flush()
	failed := 0
	for _, r := range rep.Rows {
		if !r.OK {
			failed++
		}
	}
	fmt.Fprintln(w)
	if failed == 0 {
		fmt.Fprintf(w, "every failure showed and every fix held (%d rows, %.1f s)\n", len(rep.Rows), rep.ElapsedMs/1000)
	} else {
		fmt.Fprintf(w, "%d of %d rows did not show what they should (marked FAIL) (%.1f s)\n", failed, len(rep.Rows), rep.ElapsedMs/1000)
	}
}

func writeJSON(path string, rep *Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ms turns a duration into milliseconds with a tenth of a millisecond.
func ms(d time.Duration) float64 {
	return float64(d.Round(100*time.Microsecond)) / float64(time.Millisecond)
}

// fmtMs formats a duration in whole milliseconds, or with one decimal under
// ten milliseconds.
func fmtMs(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1f ms", ms(d))
	}
	return fmt.Sprintf("%d ms", d.Round(time.Millisecond).Milliseconds())
}
