package semaphore

import "github.com/redis-primitives/go/internal/luascripts/leasecore"

// The key layout is stated once, in the package doc (# Keys); these build it.

const (
	defaultPrefix = "semaphore:"
	holdersSuffix = ":holders"
	counterSuffix = ":token"
	markSuffix    = ":waiting"
	idBytes       = 16
)

// keys returns the four keys of the semaphore called name, in the order the
// scripts take them: permits, holders, counter, waiter mark.
func (c *config) keys(name string) [4]string {
	base := c.Prefix + "{" + name + "}"
	return [4]string{base, base + holdersSuffix, base + counterSuffix, base + markSuffix}
}

// newID returns a fresh permit id, chosen before the acquire is sent.
func newID() string { return leasecore.RandomHex(idBytes) }

// heldKeys returns the keys of p's semaphore that release.lua and
// extend.lua take: permits, holders, waiter mark.
func (p *Permit) heldKeys() []string { return []string{p.keys[0], p.keys[1], p.keys[3]} }
