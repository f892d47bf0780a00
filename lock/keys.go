package lock

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// The key layout is stated once, in the package doc (# Keys); these
// functions build it.

const (
	defaultPrefix = "lock:"
	// counterSuffix ends a counter's key: the lock's key followed by it.
	counterSuffix = ":token"
	// channelSuffix ends a release channel's name; release.lua builds the
	// same name from the lock's key.
	channelSuffix = ":released"
	// idBytes is the number of random bytes in an acquisition's id.
	idBytes = 16
	// ownerBytes is the number of random bytes in the default owner label.
	ownerBytes = 8
)

// lockKey returns the key of the lock called name: "P{N}".
func (c *config) lockKey(name string) string { return c.prefix + "{" + name + "}" }

// counterKey returns the fencing counter of the lock whose key is key.
func counterKey(key string) string { return key + counterSuffix }

// channel returns the release channel of the lock called name.
func (c *config) channel(name string) string { return c.lockKey(name) + channelSuffix }

// newValue returns the value a new acquisition stores in the lock:
// "<id> <owner>", with a fresh random id that Release and Extend compare.
func newValue(owner string) string { return randomHex(idBytes) + " " + owner }

// ownerOf returns the owner label in a lock's value, "<id> <owner>" with
// or without a waiter's "*" in front.
func ownerOf(value string) string {
	_, owner, _ := strings.Cut(value, " ")
	return owner
}

// randomHex returns n random bytes in hex: an acquisition's id, and the
// default owner label.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	}
	if name[0] == '}' {
		// "P{}…" has an empty hash tag, which Redis ignores: the lock and
		// its counter would hash to different Cluster slots.
		return fmt.Errorf("%w: %q starts with '}', which would empty the keys' hash tag", ErrInvalidName, name)
	}
	return nil
}
