package interpod

import "sync"

// FreshPools empties the pools of released Filters and Scores, so that
// the next NewFilter and NewScore start from new storage (a reference
// that does not depend on Release).
func FreshPools() {
	filterPool = sync.Pool{New: func() any { return new(Filter) }}
	scorePool = sync.Pool{New: func() any { return new(Score) }}
}
