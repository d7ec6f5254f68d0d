// Package composite holds Metacontroller's CompositeController wire format as
// metahooks speaks it: the sync, finalize and customize requests and responses,
// typed access to the observed children and related objects, the one parent
// decoder, the hook function shapes, the encoder that turns typed Kubernetes
// objects into clean, sorted apply JSON, and the error kinds that the HTTP
// layer maps to status codes. The Kubernetes helpers both parents build their
// children with live in package kube.
//
// Contract:
//   - Nothing here does I/O, reads a clock or keeps global state. Time comes in as
//     an argument.
//   - Request mirrors Metacontroller's CompositeHookRequest for hook versions v1
//     and v2: child maps are keyed "<Kind>.<apiVersion>" and then by "name" (v1)
//     or "namespace/name" (v2); both key forms are accepted.
//   - An observed or related object is decoded into its typed k8s.io/api
//     object with only what hooks read: no metadata.managedFields, no last
//     applied configuration annotation (Metacontroller's or kubectl's), and
//     every pod spec in it cut to its containers' and init containers' names
//     and images. A parent is decoded whole but for managedFields and the
//     last applied configuration. What is left out is still checked to be
//     JSON (prune.go).
//   - A request is read in one pass. With a Prefetch (DecodeRequestPrefetching)
//     that pass also decodes the parent and the observed children of the
//     kinds a hook always reads; what Request.DecodeParent and Observed give
//     is the same with or without one, but where the Prefetch names with
//     ObservedReads the only members a hook reads of a kind: the other
//     members of those children are checked to be JSON and left zero. The
//     hook's tests hold its answers with its Prefetch to those without.
//   - A request is read on a fast path (a scan and a typed decoder) and,
//     where that refuses, on a slow path (sigs.k8s.io/json) for the
//     precise error; the two give one answer, refusal and status code
//     included (FuzzDecodePaths): JSON as encoding/json takes it (white
//     space only space, tab, CR and LF), keys case-sensitive, a key given
//     twice refused wherever names are checked, known or not. Both take
//     the decode budget in the body's order before they build what it
//     pays for (chargeRequest), so a request past it is refused 413 at one
//     place, before any other check but the JSON before that place.
//   - Response mirrors CompositeHookResponse. Children are emitted as a flat list,
//     sorted by apiVersion, kind and name, without status, creationTimestamp,
//     nulls or empty objects, so that the same request always produces
//     byte-identical JSON.
//   - A hook that cannot compute the full desired state returns an error, never a
//     partial Response: *RequestError means the request itself is malformed (400),
//     *InvalidError means the parent breaks its schema (422); any other error is an
//     internal failure (500). Metacontroller keeps the children untouched on every
//     non-200 answer. Every message names its field once.
package composite
