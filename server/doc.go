// Command metahooks serves the Metacontroller hooks of metahooks over HTTP and
// renders them offline.
//
//	metahooks serve  --addr 127.0.0.1:8080 --auth-token-file tokens   # POST /hooks/<parent>/{sync,finalize}, /hooks/database/customize, GET /healthz /readyz
//	metahooks render -f myapp.yaml [--observed children.yaml] [--finalizing]
//	metahooks render --request captured-request.json
//	metahooks version
//
// Only an authenticated caller reaches a hook: a bearer token from
// --auth-token-file, a client certificate from --client-ca-file (mutual TLS,
// checked per route, so probes need none), or both; otherwise 401 with a body
// that says only that credentials are missing or wrong. Without either flag
// serve refuses to start unless --insecure-allow-unauthenticated. Token file,
// key pair and client CA are polled and re-read on change (auth.go, tls.go,
// filewatch.go); /metrics has its own plain-HTTP listener (listeners.go).
//
// The HTTP layer only decodes, calls the pure hook functions of hooks/<parent>,
// encodes, and maps errors to status codes: 400 for a malformed request, 408
// for a body that did not arrive in time, 413 for a body over the limit, 415
// for a non-JSON Content-Type, 405 for a wrong method, 422 for a parent that
// breaks its schema, 429 past the in-flight budget, 500 for anything else
// (panics included). Every error body is {"error": "..."}. It never answers 200
// without the full desired state, because Metacontroller deletes every child a
// 200 omits. render calls the same functions.
package main
