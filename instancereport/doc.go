// Package instancereport is the agent that runs beside each PostgreSQL
// instance of a Database with spec.instances >= 2 (container "reporter",
// `metahooks instance-report`): it publishes the instance's report file,
// written every second by scripts/instance.sh, as the label and annotations
// of the instance's own pod, where the Database hook reads them
// (docs/database.md, "What the instances publish").
//
// Contract:
//   - It writes only metadata, through the pods/status subresource, with a
//     JSON merge patch: the hook's Role allows patch on pods/status of the
//     Database's pods and nothing else, so the agent cannot change a pod's
//     spec, read a Secret, or touch any other object; the policy
//     metahooks-instance-reports of deploy/ narrows that to its own pod's
//     example.com/role label and example.com/* annotations.
//   - It publishes a change of role, timeline or streaming at once (what a
//     failover or switchover waits for), and every change while the record
//     asks for a switchover; WAL position and time alone at most once per
//     heartbeat (10 s), so a busy primary does not write its pod, and make
//     Metacontroller call the hook, every second. A report that does not
//     change is never written again: an instance that stops reporting goes
//     stale on its pod, which is how the hook knows it is gone.
//   - A missing or malformed report file publishes nothing. API errors are
//     retried at the next poll; the agent never exits on them (its pod's
//     readiness must not depend on the API server).
//   - The service-account token and the CA are files that change at run
//     time: the token is re-read by client-go, the CA whenever it changes.
//     Neither reaches a log; nor does any response body.
package instancereport
