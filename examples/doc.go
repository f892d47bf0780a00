// Package examples holds runnable programs that show the primitives of this
// repository against real servers. Each program lives in its own directory.
package examples
