package luascripts

import (
	"errors"
	"fmt"
	"strconv"
)

// A Reply is a script call's outcome: its value (int64, string, []any of
// these, or nil for a null reply) or its error. Its methods read the value
// as one type, failing with Err if there is one, with ErrNil for a null
// reply, and with an error naming the type for any other.
type Reply struct {
	Val any
	Err error
}

// ErrNil is a Reply method's error for a null reply (a script that
// returned false or nil).
var ErrNil = errors.New("null reply")

// Result returns the value and the error.
func (r Reply) Result() (any, error) { return r.Val, r.Err }

// Int64 reads an integer reply.
func (r Reply) Int64() (int64, error) {
	if r.Err != nil {
		return 0, r.Err
	}
	switch v := r.Val.(type) {
	case int64:
		return v, nil
	case string:
		// A status or bulk reply of digits, as go-redis reads it.
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("reply %q is not an integer", v)
		}
		return n, nil
	case nil:
		return 0, ErrNil
	}
	return 0, fmt.Errorf("reply of type %T is not an integer", r.Val)
}

// Int reads an integer reply as an int.
func (r Reply) Int() (int, error) {
	n, err := r.Int64()
	return int(n), err
}

// Text reads a string reply.
func (r Reply) Text() (string, error) {
	if r.Err != nil {
		return "", r.Err
	}
	switch v := r.Val.(type) {
	case string:
		return v, nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case nil:
		return "", ErrNil
	}
	return "", fmt.Errorf("reply of type %T is not a string", r.Val)
}

// Slice reads an array reply.
func (r Reply) Slice() ([]any, error) {
	if r.Err != nil {
		return nil, r.Err
	}
	switch v := r.Val.(type) {
	case []any:
		return v, nil
	case nil:
		return nil, ErrNil
	}
	return nil, fmt.Errorf("reply of type %T is not an array", r.Val)
}

// Int64Slice reads an array reply of integers.
func (r Reply) Int64Slice() ([]int64, error) {
	a, err := r.Slice()
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(a))
	for i, v := range a {
		if out[i], err = (Reply{Val: v}).Int64(); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return out, nil
}

// StringSlice reads an array reply of strings; a null element is "".
func (r Reply) StringSlice() ([]string, error) {
	a, err := r.Slice()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(a))
	for i, v := range a {
		if v == nil {
			continue
		}
		if out[i], err = (Reply{Val: v}).Text(); err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return out, nil
}
