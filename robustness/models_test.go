package robustness

import (
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// op builds an operation for hand-made histories; ret == pending is an
// unknown outcome.
func op(client int, in any, call, ret int64, out any) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

// ms is a time in µs, for readable histories.
func ms(n int64) int64 { return n * 1000 }

// TestModelsJudgeHandMadeHistories pins each model's verdict on histories
// small enough to check by hand, the legal next to the illegal one that
// differs from it in a single result.
func TestModelsJudgeHandMadeHistories(t *testing.T) {
	ttl := 100 * time.Millisecond
	acq := func(id string, c, r int64) Acquire { return Acquire{ID: id, TTL: ttl, Call: c, Return: r} }
	rel := func(id string, c, r int64) Release { return Release{ID: id, Call: c, Return: r} }
	tok := func(id string, token int64) Acquire { return Acquire{ID: id, TTL: ttl, Token: token} }
	end := ms(10_000)
	for _, tc := range []struct {
		name  string
		model porcupine.Model
		ops   []porcupine.Operation
		legal bool
	}{
		{"a write with a lower token accepted after a higher one", Register(), []porcupine.Operation{
			op(1, Write{Token: 5, Value: "a"}, 0, 10, Accepted),
			op(2, Write{Token: 3, Value: "b"}, 20, 30, Accepted),
		}, false},
		{"the same write refused", Register(), []porcupine.Operation{
			op(1, Write{Token: 5, Value: "a"}, 0, 10, Accepted),
			op(2, Write{Token: 3, Value: "b"}, 20, 30, Refused),
			op(3, Read{}, 40, 50, ReadResult{Value: "a", Outcome: Accepted}),
		}, true},
		{"a current write refused", Register(), []porcupine.Operation{
			op(1, Write{Token: 5, Value: "a"}, 0, 10, Accepted),
			op(2, Write{Token: 5, Value: "b"}, 20, 30, Refused),
		}, false},
		{"a read of a value overwritten before it began", Register(), []porcupine.Operation{
			op(1, Write{Token: 1, Value: "a"}, 0, 10, Accepted),
			op(1, Write{Token: 2, Value: "b"}, 20, 30, Accepted),
			op(2, Read{}, 40, 50, ReadResult{Value: "a", Outcome: Accepted}),
		}, false},
		{"a read of an unknown write, which may have landed", Register(), []porcupine.Operation{
			op(1, Write{Token: 2, Value: "b"}, 0, end, Unknown),
			op(2, Read{}, 40, 50, ReadResult{Value: "b", Outcome: Accepted}),
		}, true},
		{"a write lost without a loss event", Register(), []porcupine.Operation{
			op(1, Write{Token: 2, Value: "b"}, 0, 10, Accepted),
			op(2, Read{}, 40, 50, ReadResult{Value: "", Outcome: Accepted}),
		}, false},
		{"the same with a loss event between", Register(), []porcupine.Operation{
			op(1, Write{Token: 2, Value: "b"}, 0, 10, Accepted),
			op(0, lossInput{Kind: "restart"}, 20, 30, nil),
			op(2, Read{}, 40, 50, ReadResult{Value: "", Outcome: Accepted}),
		}, true},
		{"a grant while another lease is certainly alive", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(2, acq("b", ms(50), ms(51)), ms(50), ms(51), Accepted),
		}, false},
		{"the same grant once the first lease has certainly expired", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(2, acq("b", ms(104), ms(105)), ms(104), ms(105), Accepted),
		}, true},
		{"the same grant after the first was released", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(1, rel("a", ms(10), ms(11)), ms(10), ms(11), Accepted),
			op(2, acq("b", ms(50), ms(51)), ms(50), ms(51), Accepted),
		}, true},
		{"a second grant within a capacity of two", Holders(2), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(2, acq("b", ms(50), ms(51)), ms(50), ms(51), Accepted),
		}, true},
		{"a refusal while nothing could be held", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(1, rel("a", ms(10), ms(11)), ms(10), ms(11), Accepted),
			op(2, acq("b", ms(50), ms(51)), ms(50), ms(51), Refused),
		}, false},
		{"a release that deletes a lease gone by expiry", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(1, rel("a", ms(200), ms(201)), ms(200), ms(201), Accepted),
		}, false},
		{"a release that finds its own live lease gone", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(1, rel("a", ms(10), ms(11)), ms(10), ms(11), Refused),
		}, false},
		{"a grant after an unknown release of the lease", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(1, rel("a", ms(10), pending), ms(10), end, Unknown),
			op(2, acq("b", ms(50), ms(51)), ms(50), ms(51), Accepted),
		}, true},
		{"a grant during a loss", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(0, lossInput{Kind: "failover"}, ms(20), ms(60), nil),
			op(2, acq("b", ms(50), ms(51)), ms(50), ms(51), Accepted),
		}, true},
		{"a refusal after a release", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(1, rel("a", ms(10), ms(11)), ms(10), ms(11), Accepted),
			op(2, acq("b", ms(30), ms(31)), ms(30), ms(31), Refused),
		}, false},
		{"the same refusal after a loss, which may bring the released lease back", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(1, rel("a", ms(10), ms(11)), ms(10), ms(11), Accepted),
			op(0, lossInput{Kind: "failover", End: ms(20)}, ms(12), ms(20), nil),
			op(2, acq("b", ms(30), ms(31)), ms(30), ms(31), Refused),
		}, true},
		{"a refusal after that lease would have expired", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(1, rel("a", ms(10), ms(11)), ms(10), ms(11), Accepted),
			op(0, lossInput{Kind: "failover", End: ms(20)}, ms(12), ms(20), nil),
			op(2, acq("b", ms(130), ms(131)), ms(130), ms(131), Refused),
		}, false},
		{"a refusal just after a lease's TTL", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(2, acq("b", ms(105), ms(106)), ms(105), ms(106), Refused),
		}, false},
		{"the same refusal after a slot migration moved the lease", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(1)), ms(0), ms(1), Accepted),
			op(0, moveInput{ms(50), ms(60)}, ms(50), ms(60), nil),
			op(2, acq("b", ms(105), ms(106)), ms(105), ms(106), Refused),
		}, true},
		{"a refusal while an acquire of unknown outcome may hold the lock", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(600)), ms(0), ms(600), Unknown),
			op(2, acq("b", ms(650), ms(651)), ms(650), ms(651), Refused),
		}, true},
		{"a refusal once that acquire's lease has certainly expired", Holders(1), []porcupine.Operation{
			op(1, acq("a", ms(0), ms(600)), ms(0), ms(600), Unknown),
			op(2, acq("b", ms(800), ms(801)), ms(800), ms(801), Refused),
		}, false},
		{"tokens up", Tokens(), []porcupine.Operation{
			op(1, tok("a", 5), ms(0), ms(1), Accepted),
			op(2, tok("b", 9), ms(10), ms(11), Accepted),
		}, true},
		{"a token granted again", Tokens(), []porcupine.Operation{
			op(1, tok("a", 5), ms(0), ms(1), Accepted),
			op(2, tok("b", 5), ms(10), ms(11), Accepted),
		}, false},
		{"a lower token after a loss of the counter", Tokens(), []porcupine.Operation{
			op(1, tok("a", 5), ms(0), ms(1), Accepted),
			op(0, lossInput{Kind: "failover"}, ms(3), ms(8), nil),
			op(2, tok("b", 1), ms(10), ms(11), Accepted),
			op(1, tok("c", 2), ms(20), ms(21), Accepted),
		}, true},
		{"a lower token after the first one after the loss", Tokens(), []porcupine.Operation{
			op(1, tok("a", 5), ms(0), ms(1), Accepted),
			op(0, lossInput{Kind: "failover"}, ms(3), ms(8), nil),
			op(2, tok("b", 2), ms(10), ms(11), Accepted),
			op(1, tok("c", 1), ms(20), ms(21), Accepted),
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(tc.model, tc.ops); got != tc.legal {
				t.Errorf("legal = %v, want %v", got, tc.legal)
			}
			// Cutting unknown acquires and releases to their call (the
			// holders' histories) changes no verdict.
			if got := porcupine.CheckOperations(tc.model, early(slices.Clone(tc.ops))); got != tc.legal {
				t.Errorf("with unknown outcomes taken early: legal = %v, want %v", got, tc.legal)
			}
		})
	}
}

// TestWindowBoundCountsOnlyCallsCertainlyInsideAWindow pins the limiter's
// bound: 11 admitted calls certainly within 200 ms break a limit of 10;
// the same calls spread so that one may have run outside do not; a loss
// over the window classifies it instead.
func TestWindowBoundCountsOnlyCallsCertainlyInsideAWindow(t *testing.T) {
	var tight, spread []Decision
	for i := range int64(11) {
		tight = append(tight, Decision{Call: ms(i * 10), Return: ms(i*10 + 1), Outcome: Accepted})
		spread = append(spread, Decision{Call: ms(i * 10), Return: ms(i*10 + 1), Outcome: Accepted})
	}
	spread[10].Return = ms(300) // it may have run after the window of the first
	if r := CheckWindow(tight, 10, 200*time.Millisecond, nil); r.Over == 0 || r.Worst != 11 {
		t.Errorf("11 admitted in 101 ms against 10 per 200 ms: %+v", r)
	}
	if r := CheckWindow(spread, 10, 200*time.Millisecond, nil); r.Over != 0 {
		t.Errorf("the 11th may have run outside the window: %+v", r)
	}
	loss := []Loss{{Kind: "restart", Start: ms(50), End: ms(60)}}
	if r := CheckWindow(tight, 10, 200*time.Millisecond, loss); r.Over != 0 || r.OverLoss == 0 {
		t.Errorf("a window over a restart without persistence is classified: %+v", r)
	}
}

// TestEpochsCatchTwoLeadersOfOneEpochAndAnEpochGoingBack pins the epoch
// check.
func TestEpochsCatchTwoLeadersOfOneEpochAndAnEpochGoingBack(t *testing.T) {
	ok := []Term{{Node: "a", Epoch: 1, Start: 0, End: 10}, {Node: "b", Epoch: 2, Start: 20, End: 30}, {Node: "a", Epoch: 3, Start: 25, End: 40}}
	if r := CheckEpochs(ok); len(r.Illegal) != 0 || r.Overlaps != 1 {
		t.Errorf("legal terms, one overlap: %+v", r)
	}
	twice := []Term{{Node: "a", Epoch: 1, Start: 0, End: 10}, {Node: "b", Epoch: 1, Start: 20, End: 30}}
	if r := CheckEpochs(twice); len(r.Illegal) == 0 {
		t.Error("two leaders of epoch 1 passed")
	}
	back := []Term{{Node: "a", Epoch: 2, Start: 0, End: 10}, {Node: "a", Epoch: 1, Start: 20, End: 30}}
	if r := CheckEpochs(back); len(r.Illegal) == 0 {
		t.Error("a node's epoch going back passed")
	}
}

// TestAnUnknownOutcomeStaysPendingUntilNothingCanStillRunIt pins the bound
// of an operation of unknown outcome: its deadline and the slack after it,
// or the end of a stop of the server it overlapped, and the end of its
// history when that comes first.
func TestAnUnknownOutcomeStaysPendingUntilNothingCanStillRunIt(t *testing.T) {
	after := (callTimeout + unknownSlack).Microseconds()
	stop := Loss{Start: ms(1_000), End: ms(5_000)}
	for _, tc := range []struct {
		name  string
		call  int64
		stops []Loss
		want  int64
	}{
		{"no stop", ms(0), nil, after},
		{"a stop that began before its bound", ms(0), []Loss{stop}, stop.End + unknownSlack.Microseconds()},
		{"a stop after its bound", ms(0), []Loss{{Start: after + 1, End: ms(9_000)}}, after},
		{"a stop that ended before its call", ms(6_000), []Loss{stop}, ms(6_000) + after},
	} {
		if got := unknownBound(tc.call, tc.stops); got != tc.want {
			t.Errorf("%s: bound %d, want %d", tc.name, got, tc.want)
		}
	}
	h := NewHistory()
	h.Add("lock", "p", 1, Acquire{ID: "a", TTL: time.Second, Call: ms(0), Return: pending}, ms(0), pending, Unknown)
	h.Add("lock", "p", 2, Acquire{ID: "b", TTL: time.Second, Call: ms(10_000), Return: ms(10_001)}, ms(10_000), ms(10_001), Accepted)
	h.Add("lock", "p", 3, Acquire{ID: "c", TTL: time.Second, Call: ms(10_002), Return: pending}, ms(10_002), pending, Unknown)
	ops := h.Ops("p", false)
	if ops[0].Return != after || ops[0].Input.(Acquire).Return != after {
		t.Errorf("the first unknown acquire is pending until %d (its input says %d), want %d", ops[0].Return, ops[0].Input.(Acquire).Return, after)
	}
	if ops[2].Return != ms(10_002)+1 {
		t.Errorf("the last unknown acquire is pending until %d, want the end of the history %d", ops[2].Return, ms(10_002)+1)
	}
}
