package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"metahooks/hooks/composite"
)

// errorBody is the JSON body of every non-200 answer. Metacontroller shows it
// to users in the SyncError event on the parent.
type errorBody struct {
	Error string `json:"error"`
}

// statusCode maps a hook or decode error to its HTTP status code.
func statusCode(err error) int {
	var (
		requestErr *composite.RequestError
		invalidErr *composite.InvalidError
		tooLarge   *http.MaxBytesError
		tooCostly  *composite.CostError
	)
	switch {
	case errors.As(err, &tooLarge), errors.As(err, &tooCostly):
		return http.StatusRequestEntityTooLarge
	case errors.As(err, &requestErr):
		return http.StatusBadRequest
	case errors.As(err, &invalidErr):
		return http.StatusUnprocessableEntity
	default:
		return http.StatusInternalServerError
	}
}

func writeError(w http.ResponseWriter, code int, message string) {
	writeJSON(w, code, errorBody{Error: message})
}

func writeJSON(w http.ResponseWriter, code int, body any) {
	raw, err := json.Marshal(body)
	if err != nil {
		code, raw = http.StatusInternalServerError, []byte(`{"error":"cannot encode response"}`)
	}
	raw = append(raw, '\n')
	w.Header().Set("Content-Type", "application/json")
	// With its length the answer is complete once flushed, even while the
	// handler goes on (drainAfterRefusal).
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	w.WriteHeader(code)
	_, _ = w.Write(raw)
}
