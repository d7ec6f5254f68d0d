package composite

import (
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// encoding/json's rules for the members of a struct, which the encoder's
// plans write and the decoder's prune trees (prune.go) follow.

// jsonMember is one JSON member of a struct type as encoding/json resolves
// it.
type jsonMember struct {
	name                string
	tagged              bool  // named by its tag
	index               []int // the field's index, through embedded structs
	typ                 reflect.Type
	omitEmpty, omitZero bool
}

// jsonMembers lists the JSON members of struct type t as encoding/json
// resolves them (embedded structs inlined, the dominant field of a name
// kept), sorted by name. It reports false for a struct with a ",string"
// field, which the encoder leaves to encoding/json.
func jsonMembers(t reflect.Type) ([]jsonMember, bool) {
	var all []jsonMember
	current, next := []jsonMember{}, []jsonMember{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, f := range current {
			if visited[f.typ] {
				continue
			}
			visited[f.typ] = true
			for i := range f.typ.NumField() {
				sf := f.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, options, _ := strings.Cut(tag, ",")
				if !isValidTag(name) {
					name = ""
				}
				opts := strings.Split(options, ",")
				if slices.Contains(opts, "string") {
					return nil, false
				}
				index := append(slices.Clone(f.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					c := jsonMember{name: name, tagged: name != "", index: index, typ: sf.Type,
						omitEmpty: slices.Contains(opts, "omitempty"), omitZero: slices.Contains(opts, "omitzero")}
					if c.name == "" {
						c.name = sf.Name
					}
					all = append(all, c)
					if count[f.typ] > 1 { // two at this depth: they annihilate below
						all = append(all, c)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, jsonMember{name: ft.Name(), index: index, typ: ft})
				}
			}
		}
	}
	slices.SortStableFunc(all, func(a, b jsonMember) int {
		if c := strings.Compare(a.name, b.name); c != 0 {
			return c
		}
		if len(a.index) != len(b.index) {
			return len(a.index) - len(b.index)
		}
		if a.tagged != b.tagged {
			if a.tagged {
				return -1
			}
			return 1
		}
		return slices.Compare(a.index, b.index)
	})
	var members []jsonMember
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].name == all[i].name {
			j++
		}
		group := all[i:j]
		i = j
		if len(group) > 1 && len(group[0].index) == len(group[1].index) && group[0].tagged == group[1].tagged {
			continue // no dominant field: encoding/json writes none
		}
		members = append(members, group[0])
	}
	return members, true // sorted by name: all was
}

// isValidTag is encoding/json's test of a tag's name.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
