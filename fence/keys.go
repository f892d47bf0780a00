package fence

import (
	"fmt"
	"strings"
)

// markSuffix ends the name of every high-water mark. Keys written through a
// Store may not end with it, so a write can never land on a mark.
const markSuffix = ":fence:hw"

// maxToken is the largest token Lua compares exactly (its numbers are
// doubles).
const maxToken = 1 << 53

// hashTag returns the part of key Redis Cluster hashes when the key has a
// hash tag: the text between the first '{' and the first '}' after it, if
// that text is not empty.
func hashTag(key string) (string, bool) {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return "", false
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return "", false
	}
	return key[open+1 : open+1+end], true
}

// slotOf returns the string Redis Cluster hashes for key: its hash tag, or
// the whole key when it has none. Two keys with the same slotOf share a slot.
func slotOf(key string) string {
	if tag, ok := hashTag(key); ok {
		return tag
	}
	return key
}

func checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if strings.HasSuffix(key, markSuffix) {
		return fmt.Errorf("%w: %q ends in %q, which is reserved for high-water marks", ErrInvalidKey, key, markSuffix)
	}
	return nil
}

func checkToken(token int64) error {
	if token < 1 || token > maxToken {
		return fmt.Errorf("%w: %d (want 1..2^53)", ErrInvalidToken, token)
	}
	return nil
}

// markFor returns the high-water mark that guards writes to key, named as
// the package doc's key layout says, in the same hash slot as key.
func (s *Store) markFor(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if s.scope != "" {
		if tag, ok := hashTag(key); !ok || tag != s.scope {
			return "", fmt.Errorf("%w: %q lacks the scope's hash tag {%s}; build keys with Store.Key", ErrCrossSlot, key, s.scope)
		}
		return "{" + s.scope + "}" + markSuffix, nil
	}
	if _, ok := hashTag(key); ok {
		return key + markSuffix, nil
	}
	if strings.Contains(key, "}") {
		// A '}' would end the tag we wrap the key in too early, and the key
		// has no tag of its own to reuse: no other key can share its slot.
		return "", fmt.Errorf("%w: %q contains '}' but no hash tag, so no mark can share its slot", ErrCrossSlot, key)
	}
	// The suffix twice: "{k}:fence:hw" is the mark of the tagged key "{k}"
	// (and of the scope "k"), a different resource, so the untagged key "k"
	// needs another name in the same slot. What stands before the last
	// suffix, "{k}:fence:hw", is itself a reserved name no user key can
	// have, so no tagged key's mark can equal this one.
	return "{" + key + "}" + markSuffix + markSuffix, nil
}

// Key returns the name to write under for name: in a scoped Store, name
// under the scope's hash tag (see the package doc's key layout), so it
// shares the scope's mark and slot; otherwise name itself.
func (s *Store) Key(name string) string {
	if s == nil || s.scope == "" {
		return name
	}
	return "{" + s.scope + "}:" + name
}
