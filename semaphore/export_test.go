package semaphore

import "context"

// ResendAcquire sends p's acquire again, with its id, as a client does
// when it lost the reply: for the test that a resend takes one permit.
func ResendAcquire(ctx context.Context, s *Issuer, p *Permit) (*Permit, error) {
	args := []any{p.Capacity, p.TTL.Milliseconds(), p.ID, p.Owner}
	res, err := acquireScript.Run(ctx, s.cfg.Client, p.keys[:], args...).Int64Slice()
	if err != nil {
		return nil, err
	}
	q := *p
	q.Token = res[0]
	return &q, nil
}
