// Package readme runs README.md's commands that need no cluster exactly as
// printed, against `make run`, and checks what the README says they print.
package readme
