// Package composite holds what every Metacontroller CompositeController hook in
// metahooks shares: the wire types of the sync, finalize and customize hooks,
// typed access to the observed children and related objects, the encoder that
// turns typed Kubernetes objects into clean, sorted apply JSON, the
// status-condition helper, and the error kinds that the HTTP layer maps to
// status codes.
//
// Contract:
//   - Nothing here does I/O, reads a clock or keeps global state. Time comes in as
//     an argument.
//   - Request mirrors Metacontroller's CompositeHookRequest for hook versions v1
//     and v2: child maps are keyed "<Kind>.<apiVersion>" and then by "name" (v1)
//     or "namespace/name" (v2); both key forms are accepted.
//   - Response mirrors CompositeHookResponse. Children are emitted as a flat list,
//     sorted by apiVersion, kind and name, without status, creationTimestamp,
//     nulls or empty objects, so that the same request always produces
//     byte-identical JSON.
//   - A hook that cannot compute the full desired state returns an error, never a
//     partial Response: *RequestError means the request itself is malformed (400),
//     *InvalidError means the parent breaks its schema (422); any other error is an
//     internal failure (500). Metacontroller keeps the children untouched on every
//     non-200 answer.
package composite
