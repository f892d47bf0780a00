package ratelimit

// A Rule is what a Limiter enforces on a key: a single Limit or a Policy.
type Rule interface {
	limits() []Limit
}

func (l Limit) limits() []Limit { return []Limit{l} }

// A Policy is several limits on one key, such as 10 per second and 1000
// per day, checked and consumed in one atomic script: a request is admitted
// only if every limit admits it, and then every limit counts it; when any
// limit rejects, none counts it. Result.Limit says which limit bound.
type Policy []Limit

func (p Policy) limits() []Limit { return p }

// Validate reports, without a round trip, whether every call with p would
// be refused as input: an empty policy, an invalid limit, or one limit
// twice. Configuration code calls it so that a policy that can never work
// fails at start-up, not on every request.
func (p Policy) Validate() error {
	_, err := check("-", p, 1, nil)
	return err
}
