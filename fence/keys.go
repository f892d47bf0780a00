package fence

import (
	"fmt"
	"strings"
)

// markSuffix is what a high-water mark's name adds to the name of what it
// guards (see the package doc's key layout). Keys that are marks may not
// be written, so a write can never land on a mark.
const markSuffix = ":fence"

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

// isMark reports whether key has the name of a per-key or scope mark.
func isMark(key string) bool {
	tag, ok := hashTag(key)
	if !ok {
		return false
	}
	return strings.HasSuffix(key, markSuffix) || key == tag+markSuffix+"{"+tag+"}"
}

func checkKey(key string) error {
	if key == "" {
		return fmt.Errorf("%w: empty key", ErrInvalidKey)
	}
	if isMark(key) {
		return fmt.Errorf("%w: %q is the name of a high-water mark", ErrInvalidKey, key)
	}
	return nil
}

func checkToken(token int64) error {
	if token < 1 || token > maxToken {
		return fmt.Errorf("%w: %d (want 1..2^53)", ErrInvalidToken, token)
	}
	return nil
}

// scopePrefix returns what the keys and the mark of the scope name start
// with: name itself when it has a hash tag, else name in braces.
func scopePrefix(name string) (string, error) {
	if !strings.ContainsAny(name, "{}") {
		return "{" + name + "}", nil
	}
	if _, ok := hashTag(name); !ok {
		return "", fmt.Errorf("%w: scope %q has braces but no hash tag", ErrInvalidOption, name)
	}
	return name, nil
}

// markFor returns the high-water mark that guards writes to key, named as
// the package doc's key layout says, in the same hash slot as key and
// under the same prefix.
func (s *Store) markFor(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if s.scope != "" {
		if slotOf(key) != s.tag {
			return "", fmt.Errorf("%w: %q lacks the scope's hash tag {%s}; build keys with Store.Key", ErrCrossSlot, key, s.tag)
		}
		return s.prefix + markSuffix, nil
	}
	if _, ok := hashTag(key); ok {
		return key + markSuffix, nil
	}
	if strings.ContainsAny(key, "{}") {
		// Any name that starts with key has its first '{' inside key, and
		// so either a tag that is not the key's slot or no tag at all.
		return "", fmt.Errorf("%w: %q has a brace but no hash tag, so no mark under its name can share its slot", ErrCrossSlot, key)
	}
	// The key's own name in braces as the tag: hashed like the untagged
	// key, and apart from the mark of the tagged key "{k}", "{k}:fence".
	return key + markSuffix + "{" + key + "}", nil
}

// Key returns the name to write under for name: in a scoped Store, name
// under the scope's prefix (see the package doc's key layout), so it
// shares the scope's mark and slot; otherwise name itself.
func (s *Store) Key(name string) string {
	if s == nil || s.scope == "" {
		return name
	}
	return s.prefix + ":" + name
}
