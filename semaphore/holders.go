package semaphore

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis-primitives/go/internal/luascripts"
)

//go:embed holders.lua
var holdersSource string

var holdersScript = luascripts.NewReadOnly("semaphore/holders.lua", holdersSource)

// Holder is one live permit, as Holders reports it.
type Holder struct {
	ID    string
	Token int64
	Owner string
	// Granted is the server's clock when the permit was granted.
	Granted time.Time
	// TTL is the permit's remaining time to live.
	TTL time.Duration
}

// Holders reports the live permits of the semaphore called name, the one
// that expires first first. It is a diagnostic: the answer may be stale by
// the time it arrives, so never decide to write on it.
func (s *Issuer) Holders(ctx context.Context, name string) ([]Holder, error) {
	if err := s.core().CheckName(name); err != nil {
		return nil, err
	}
	keys := s.cfg.keys(name)
	res, err := holdersScript.Run(ctx, s.cfg.Client, keys[:2]).Slice()
	if err != nil {
		return nil, errs.Call(ctx, "holders", name, err)
	}
	if len(res)%3 != 1 {
		return nil, fmt.Errorf("semaphore: holders %q: unexpected reply %v", name, res)
	}
	now, _ := res[0].(int64)
	holders := make([]Holder, 0, len(res)/3)
	for i := 1; i+2 < len(res); i += 3 {
		id, _ := res[i].(string)
		expiry, _ := res[i+1].(string) // a score comes back as a string
		value, _ := res[i+2].(string)
		h := Holder{ID: id}
		if us, err := strconv.ParseFloat(expiry, 64); err == nil {
			h.TTL = time.Duration(int64(us)-now) * time.Microsecond
		}
		// value is "<token> <granted µs> <owner>"
		fields := strings.SplitN(value, " ", 3)
		if len(fields) == 3 {
			h.Token, _ = strconv.ParseInt(fields[0], 10, 64)
			granted, _ := strconv.ParseInt(fields[1], 10, 64)
			h.Granted, h.Owner = serverTime(granted), fields[2]
		}
		holders = append(holders, h)
	}
	return holders, nil
}
