package main

import "time"

// Timeline is what -svg draws and -json records of a scenario: who held the
// lease when, which writes were accepted or refused, and the window in which
// a stale holder acted. Times are milliseconds since the scenario began.
type Timeline struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Caption string   `json:"caption"`
	EndMs   float64  `json:"end_ms"`
	Lanes   []*Lane  `json:"lanes"`
	Windows []Window `json:"windows"`
}

// Lane is one actor: a worker or a node.
type Lane struct {
	Name string `json:"name"`
	// Detail is a second line under the name: an epoch or a token, which
	// with hybrid-clock tokens has 16 digits and would not fit beside it.
	Detail string `json:"detail,omitempty"`
	Spans  []Span `json:"spans"`
	Marks  []Mark `json:"marks"`
}

// Span kinds.
const (
	spanLease    = "lease"    // the lease existed on the server for this actor
	spanBelieves = "believes" // the actor acted as holder or leader
	spanFrozen   = "frozen"   // the actor's process was stopped (SIGSTOP)
)

// Mark kinds.
const (
	markAccepted  = "accepted"  // a write the resource took, rightly
	markClobbered = "clobbered" // a stale write the resource took: the failure
	markRefused   = "refused"   // a stale write the resource refused: the fix
	markEvent     = "event"     // something that happened (elected, stepped down)
)

// Span is a stretch of time on a lane.
type Span struct {
	Kind   string  `json:"kind"`
	FromMs float64 `json:"from_ms"`
	ToMs   float64 `json:"to_ms"`
	Label  string  `json:"label,omitempty"`
}

// Mark is an instant on a lane.
type Mark struct {
	Kind  string  `json:"kind"`
	AtMs  float64 `json:"at_ms"`
	Label string  `json:"label,omitempty"`
}

// Window is a stretch shaded across every lane.
type Window struct {
	FromMs float64 `json:"from_ms"`
	ToMs   float64 `json:"to_ms"`
	Label  string  `json:"label"`
}

// clock turns instants into milliseconds since t0.
type clock struct{ t0 time.Time }

func (c clock) at(t time.Time) float64 { return ms(t.Sub(c.t0)) }

func (tl *Timeline) lane(name, detail string) *Lane {
	l := &Lane{Name: name, Detail: detail}
	tl.Lanes = append(tl.Lanes, l)
	return l
}

func (l *Lane) span(kind string, from, to float64, label string) {
	l.Spans = append(l.Spans, Span{Kind: kind, FromMs: from, ToMs: to, Label: label})
}

func (l *Lane) mark(kind string, at float64, label string) {
	l.Marks = append(l.Marks, Mark{Kind: kind, AtMs: at, Label: label})
}
