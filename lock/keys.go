package lock

import (
	"strings"

	"github.com/redis-primitives/go/internal/luascripts/leasecore"
)

// The key layout is stated once, in the package doc (# Keys); these
// functions build it.

const (
	defaultPrefix = "lock:"
	// counterSuffix ends a counter's key: the lock's key followed by it.
	counterSuffix = ":token"
	// idBytes is the number of random bytes in an acquisition's id.
	idBytes = 16
)

// lockKey returns the key of the lock called name: "P{N}".
func (c *config) lockKey(name string) string { return c.Prefix + "{" + name + "}" }

// counterKey returns the fencing counter of the lock whose key is key.
func counterKey(key string) string { return key + counterSuffix }

// newValue returns the value a new acquisition stores in the lock:
// "<id> <owner>", with a fresh random id that Release and Extend compare.
func newValue(owner string) string { return leasecore.RandomHex(idBytes) + " " + owner }

// ownerOf returns the owner label in a lock's value, "<id> <owner>" with
// or without a waiter's "*" in front.
func ownerOf(value string) string {
	_, owner, _ := strings.Cut(value, " ")
	return owner
}
