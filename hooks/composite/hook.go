package composite

import "time"

// SyncFunc is the shape of every parent's sync and finalize hook: a pure
// function from the request (and the time, which only a condition whose
// status changes may show) to the full desired state, or an error and no
// response at all.
type SyncFunc func(req *Request, now time.Time) (*Response, error)

// CustomizeFunc is the shape of a parent's customize hook.
type CustomizeFunc func(req *CustomizeRequest) (*CustomizeResponse, error)
