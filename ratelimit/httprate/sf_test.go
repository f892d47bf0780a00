package httprate_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// A strict parser for the structured fields (RFC 8941) that
// draft-ietf-httpapi-ratelimit-headers uses: a List of Items with
// Parameters. It follows the parsing algorithms of RFC 8941 section 4.2 and
// fails where they fail; Inner Lists, which the draft does not use, are an
// error too. Duplicate parameter keys, which RFC 8941 resolves silently
// (the last wins), are an error here: a field that repeats q is a bug.

type sfItem struct {
	value  any // int64, float64, sfString, sfToken, []byte or bool
	params []sfParam
}

type sfParam struct {
	key   string
	value any
}

type (
	sfString string
	sfToken  string
)

func (it sfItem) param(key string) (any, bool) {
	for _, p := range it.params {
		if p.key == key {
			return p.value, true
		}
	}
	return nil, false
}

type sfParser struct {
	s string
	i int
}

func (p *sfParser) eof() bool  { return p.i >= len(p.s) }
func (p *sfParser) peek() byte { return p.s[p.i] }
func (p *sfParser) errorf(format string, args ...any) error {
	return fmt.Errorf("structured field %q at %d: %s", p.s, p.i, fmt.Sprintf(format, args...))
}

func parseSFList(s string) ([]sfItem, error) {
	p := &sfParser{s: s}
	for !p.eof() && p.peek() == ' ' {
		p.i++
	}
	var list []sfItem
	for !p.eof() {
		if p.peek() == '(' {
			return nil, p.errorf("inner list, which the draft does not use")
		}
		it, err := p.item()
		if err != nil {
			return nil, err
		}
		list = append(list, it)
		p.ows()
		if p.eof() {
			return list, nil
		}
		if p.peek() != ',' {
			return nil, p.errorf("want ',' after a list member, got %q", p.peek())
		}
		p.i++
		p.ows()
		if p.eof() {
			return nil, p.errorf("trailing comma")
		}
	}
	if len(list) == 0 {
		return nil, errors.New("structured field: empty list")
	}
	return list, nil
}

func (p *sfParser) ows() {
	for !p.eof() && (p.peek() == ' ' || p.peek() == '\t') {
		p.i++
	}
}

func (p *sfParser) item() (sfItem, error) {
	v, err := p.bareItem()
	if err != nil {
		return sfItem{}, err
	}
	it := sfItem{value: v}
	for !p.eof() && p.peek() == ';' {
		p.i++
		for !p.eof() && p.peek() == ' ' {
			p.i++
		}
		key, err := p.key()
		if err != nil {
			return sfItem{}, err
		}
		var val any = true
		if !p.eof() && p.peek() == '=' {
			p.i++
			if val, err = p.bareItem(); err != nil {
				return sfItem{}, err
			}
		}
		if _, dup := it.param(key); dup {
			return sfItem{}, p.errorf("parameter %q twice", key)
		}
		it.params = append(it.params, sfParam{key, val})
	}
	return it, nil
}

func isLCAlpha(c byte) bool { return 'a' <= c && c <= 'z' }
func isAlpha(c byte) bool   { return isLCAlpha(c) || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool   { return '0' <= c && c <= '9' }

// isTChar is RFC 9110's tchar.
func isTChar(c byte) bool {
	return isAlpha(c) || isDigit(c) || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *sfParser) key() (string, error) {
	if p.eof() || !(isLCAlpha(p.peek()) || p.peek() == '*') {
		return "", p.errorf("key must start with a lowercase letter or '*'")
	}
	start := p.i
	for !p.eof() {
		c := p.peek()
		if !(isLCAlpha(c) || isDigit(c) || c == '_' || c == '-' || c == '.' || c == '*') {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

func (p *sfParser) bareItem() (any, error) {
	if p.eof() {
		return nil, p.errorf("missing item")
	}
	switch c := p.peek(); {
	case c == '-' || isDigit(c):
		return p.number()
	case c == '"':
		return p.str()
	case c == '*' || isAlpha(c):
		return p.token(), nil
	case c == ':':
		return p.bytes()
	case c == '?':
		return p.boolean()
	default:
		return nil, p.errorf("no item starts with %q", c)
	}
}

func (p *sfParser) number() (any, error) {
	start := p.i
	if p.peek() == '-' {
		p.i++
	}
	if p.eof() || !isDigit(p.peek()) {
		return nil, p.errorf("number without digits")
	}
	digits, dot := 0, -1
	for !p.eof() {
		c := p.peek()
		if isDigit(c) {
			digits++
		} else if c == '.' && dot < 0 {
			if digits > 12 {
				return nil, p.errorf("decimal with more than 12 integer digits")
			}
			dot = digits
		} else {
			break
		}
		p.i++
		if dot < 0 && digits > 15 {
			return nil, p.errorf("integer with more than 15 digits")
		}
		if dot >= 0 && digits-dot > 3 {
			return nil, p.errorf("decimal with more than 3 fraction digits")
		}
	}
	text := p.s[start:p.i]
	if dot < 0 {
		n, err := strconv.ParseInt(text, 10, 64)
		return n, err
	}
	if digits == dot {
		return nil, p.errorf("decimal ending in '.'")
	}
	f, err := strconv.ParseFloat(text, 64)
	return f, err
}

func (p *sfParser) str() (any, error) {
	p.i++ // '"'
	var b strings.Builder
	for !p.eof() {
		c := p.peek()
		p.i++
		switch {
		case c == '\\':
			if p.eof() || (p.peek() != '"' && p.peek() != '\\') {
				return nil, p.errorf("bad escape in string")
			}
			b.WriteByte(p.peek())
			p.i++
		case c == '"':
			return sfString(b.String()), nil
		case c < 0x20 || c > 0x7e:
			return nil, p.errorf("byte %#x in string", c)
		default:
			b.WriteByte(c)
		}
	}
	return nil, p.errorf("unterminated string")
}

func (p *sfParser) token() any {
	start := p.i
	p.i++
	for !p.eof() && (isTChar(p.peek()) || p.peek() == ':' || p.peek() == '/') {
		p.i++
	}
	return sfToken(p.s[start:p.i])
}

func (p *sfParser) bytes() (any, error) {
	p.i++
	end := strings.IndexByte(p.s[p.i:], ':')
	if end < 0 {
		return nil, p.errorf("unterminated byte sequence")
	}
	b := p.s[p.i : p.i+end]
	p.i += end + 1
	return []byte(b), nil // not decoded: the draft has none
}

func (p *sfParser) boolean() (any, error) {
	p.i++
	if p.eof() || (p.peek() != '0' && p.peek() != '1') {
		return nil, p.errorf("bad boolean")
	}
	v := p.peek() == '1'
	p.i++
	return v, nil
}

func TestStrictStructuredFieldParserRejectsWhatRFC8941Rejects(t *testing.T) {
	for _, bad := range []string{
		``, `"a",`, `"a" "b"`, `"a";Q=1`, `"a";q=1;q=2`, `"a";q=01.`, `"a";q=1234567890123456`,
		`"a`, `"a\x"`, `("a")`, `"a";q=1.1234`, `"a",,"b"`, `"a";=1`, "\"\x7f\"",
	} {
		if l, err := parseSFList(bad); err == nil {
			t.Errorf("%q parsed as %+v", bad, l)
		}
	}
	l, err := parseSFList(` "a\"b";q=100;w=60 ,	tok;r=-1;t=?0, "c";x=1.5;y=*z:/ `)
	if err != nil {
		t.Fatal(err)
	}
	if len(l) != 3 || l[0].value != sfString(`a"b`) || l[1].value != sfToken("tok") || l[2].params[1].value != sfToken("*z:/") {
		t.Fatalf("%+v", l)
	}
}
