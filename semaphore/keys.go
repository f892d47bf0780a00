package semaphore

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
)

// The key layout is stated once, in the package doc (# Keys); these build it.

const (
	defaultPrefix = "semaphore:"
	holdersSuffix = ":holders"
	counterSuffix = ":token"
	markSuffix    = ":waiting"
	// channelSuffix ends the release channel; release.lua builds the same
	// name from the permits' key.
	channelSuffix = ":released"
	idBytes       = 16
)

// keys returns the four keys of the semaphore called name, in the order the
// scripts take them: permits, holders, counter, waiter mark.
func (c *config) keys(name string) [4]string {
	base := c.prefix + "{" + name + "}"
	return [4]string{base, base + holdersSuffix, base + counterSuffix, base + markSuffix}
}

// channel returns the release channel of the semaphore called name.
func (c *config) channel(name string) string { return c.prefix + "{" + name + "}" + channelSuffix }

// newID returns a fresh permit id: random, chosen here, so a retried
// acquire carries the same one.
func newID() string {
	b := make([]byte, idBytes)
	_, _ = rand.Read(b) // never fails on supported platforms
	return hex.EncodeToString(b)
}

func checkName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty name", ErrInvalidName)
	case strings.HasPrefix(name, "}"):
		// "P{}…" has an empty hash tag, which Redis ignores: the keys would
		// hash to different Cluster slots.
		return fmt.Errorf("%w: %q starts with '}', which would empty the keys' hash tag", ErrInvalidName, name)
	}
	return nil
}
