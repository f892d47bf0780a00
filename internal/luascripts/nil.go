package luascripts

import "reflect"

// IsNil reports whether the client c is nil, including a nil pointer of a concrete
// client type inside the interface (var c *redis.Client; New(c)), which
// would otherwise pass a nil check and panic on the first call. The
// constructors of every module use it to return a typed error instead.
func IsNil(c any) bool {
	if c == nil {
		return true
	}
	v := reflect.ValueOf(c)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
