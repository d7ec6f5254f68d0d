package podrun

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The cases of the kubelet's own expansion test (k8s.io/kubernetes
// third_party/forked/golang/expansion/expand_test.go), with their results.
func TestExpand(t *testing.T) {
	vars := map[string]string{"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}
	for _, tc := range []struct{ reason, in, want string }{
		{"a whole string is a reference", "$(VAR_A)", "A"},
		{"a reference repeated", "$(VAR_A)-$(VAR_A)", "A-A"},
		{"at the beginning", "$(VAR_A)-1", "A-1"},
		{"in the middle", "___$(VAR_B)___", "___B___"},
		{"at the end", "___$(VAR_C)", "___C"},
		{"several", "$(VAR_A)_$(VAR_B)_$(VAR_C)", "A_B_C"},
		{"$$ escapes a reference, the next one expands", "$$(VAR_B)_$(VAR_A)", "$(VAR_B)_A"},
		{"two escapes", "$$(VAR_A)_$$(VAR_B)", "$(VAR_A)_$(VAR_B)"},
		{"$$ before a name without parentheses", "f000-$$VAR_A", "f000-$VAR_A"},
		{"a backslash escapes nothing", `foo\$(VAR_C)bar`, `foo\Cbar`},
		{"two backslashes escape nothing", `foo\\$(VAR_C)bar`, `foo\\Cbar`},
		{"four backslashes escape nothing", `foo\\\\$(VAR_A)bar`, `foo\\\\Abar`},
		{"nested references are not expanded", "$(VAR_A$(VAR_B))", "$(VAR_A$(VAR_B))"},
		{"a nested reference left open", "$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"},
		{"a value that is a reference is not expanded again", "$(VAR_REF)", "$(VAR_A)"},
		{"the same, twice", "%%$(VAR_REF)--$(VAR_REF)%%", "%%$(VAR_A)--$(VAR_A)%%"},
		{"an empty value", "foo$(VAR_EMPTY)bar", "foobar"},
		{"an unterminated reference", "foo$(VAR_Awhoops!", "foo$(VAR_Awhoops!"},
		{"parentheses without $", "f00__(VAR_A)__", "f00__(VAR_A)__"},
		{"shell specials pass through", "$?_boo_$!", "$?_boo_$!"},
		{"a bare $NAME is not a reference", "$VAR_A", "$VAR_A"},
		{"an undefined name stays", "$(VAR_DNE)", "$(VAR_DNE)"},
		{"six $ are three, undefined", "$$$$$$(BIG_MONEY)", "$$$(BIG_MONEY)"},
		{"six $ are three, defined", "$$$$$$(VAR_A)", "$$$(VAR_A)"},
		{"seven $: three and a reference, undefined", "$$$$$$$(GOOD_ODDS)", "$$$$(GOOD_ODDS)"},
		{"seven $: three and a reference, defined", "$$$$$$$(VAR_A)", "$$$A"},
		{"a $ at the end stays", "foo$", "foo$"},
		{"$$ at the end is one $", "foo$$", "foo$"},
		{"an empty name is undefined", "$()", "$()"},
		{"shell command substitution passes", `x=$(dirname "$PGDATA")`, `x=$(dirname "$PGDATA")`},
		{"shell arithmetic passes", "i=$((i + 1))", "i=$((i + 1))"},
		{"the shell's PID ($$) loses a $", "echo $$", "echo $"},
		{"multibyte after $", "$é$(VAR_A)", "$éA"},
	} {
		if diff := cmp.Diff(tc.want, expand(tc.in, vars)); diff != "" {
			t.Errorf("%s: expand(%q) (-want +got):\n%s", tc.reason, tc.in, diff)
		}
	}
}
