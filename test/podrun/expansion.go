package podrun

// The kubelet's $(VAR) expansion, ported from k8s.io/kubernetes
// third_party/forked/golang/expansion (expand.go, BSD-style license of the Go
// Authors, as the Go standard library): importing k8s.io/kubernetes itself
// needs a replace directive for every staging module, for 90 lines.
//
// The kubelet expands a container's env values in order, each with the ones
// declared before it (a value from a Secret or ConfigMap key is not
// expanded, but later values may refer to it), then its command and args with
// the whole env. $$ is a literal $, $(NAME) of an undefined NAME stays as it
// is, and so does anything else after a $.

import (
	"strings"
	"unicode/utf8"
)

// expand replaces the $(NAME) references in input with vars[NAME].
func expand(input string, vars map[string]string) string {
	var buf strings.Builder
	checkpoint := 0
	for cursor := 0; cursor < len(input); cursor++ {
		if input[cursor] == '$' && cursor+1 < len(input) {
			buf.WriteString(input[checkpoint:cursor])
			read, isVar, advance := readVariableName(input[cursor+1:])
			if isVar {
				if v, ok := vars[read]; ok {
					buf.WriteString(v)
				} else {
					buf.WriteString("$(" + read + ")")
				}
			} else {
				buf.WriteString(read)
			}
			cursor += advance
			checkpoint = cursor + 1
		}
	}
	return buf.String() + input[checkpoint:]
}

// readVariableName reads what follows a $: the text to write, whether it is
// a variable name to look up, and how many bytes it took.
func readVariableName(input string) (string, bool, int) {
	r, size := utf8.DecodeRuneInString(input)
	switch r {
	case '$': // an escaped $
		return input[0:size], false, size
	case '(':
		for i := 1; i < len(input); i++ {
			if input[i] == ')' {
				return input[1:i], true, i + 1
			}
		}
		return "$(", false, 1 // an unterminated reference
	default:
		return "$" + string(r), false, size
	}
}
