package luascripts

// ArgOK reports whether a is an argument every client writes alike: a
// string, a []byte, or an integer or a float of any size (integers in
// decimal, floats in the shortest decimal that reads back as the same
// number). Anything else (nil, a bool, a struct) each client writes its
// own way, or not at all: go-redis writes nil as "", rueidis has no
// argument for it. A primitive that passes a caller's value to a script
// refuses it unless ArgOK.
func ArgOK(a any) bool {
	switch a.(type) {
	case string, []byte, int, int64, uint64, float64, int32, uint32, int16, uint16, int8, uint8, uint, float32:
		return true
	}
	return false
}
