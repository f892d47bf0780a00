// Package fence makes Redis keys refuse writes from stale lock holders.
//
// Each write carries a fencing token and runs as one script that compares the
// token with the highest one the resource has accepted, refuses it if lower,
// and otherwise records it and writes.
//
// What it does not guarantee: fencing orders writes; it does not detect
// staleness. A stale holder that writes before the new holder has written
// anything is accepted. And a token the resource does not check protects
// nothing.
package fence
