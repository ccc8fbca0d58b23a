package cache

import "sync"

// warned holds the kinds of warning already printed: each is printed once per process,
// however many caches or entries trip it.
var warned sync.Map

// warn prints a warning of kind through Options.Log, the first time only.
func (c *Cache) warn(kind, format string, args ...any) {
	if c.log == nil {
		return
	}
	if _, dup := warned.LoadOrStore(kind, true); dup {
		return
	}
	c.log("cache: "+format, args...)
}
