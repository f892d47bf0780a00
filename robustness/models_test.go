package robustness

import (
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
			op(0, lossInput{"restart"}, 20, 30, nil),
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
			op(0, lossInput{"failover"}, ms(20), ms(60), nil),
			op(2, acq("b", ms(50), ms(51)), ms(50), ms(51), Accepted),
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := porcupine.CheckOperations(tc.model, tc.ops); got != tc.legal {
				t.Errorf("legal = %v, want %v", got, tc.legal)
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
