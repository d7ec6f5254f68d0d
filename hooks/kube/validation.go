package kube

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"

	"metahooks/hooks/composite"
)

// What the API server refuses in a child, checked in the parent instead, so
// that a bad parent gets an error naming its own field rather than a child
// Metacontroller cannot create on every sync. Each function returns the
// reason alone; the caller names the field.

// ChildName is a name a hook derives from its parent's name, with the most
// characters the API server (or the controller that makes objects from it)
// allows for it.
type ChildName struct {
	Name string
	Max  int
	What string // what makes the limit, for the message: "CronJob <name>-backup"
}

// MaxStatefulSetName is the longest StatefulSet name whose pods get a
// controller-revision-hash label (<name>-<10 character hash>) of at most 63.
const MaxStatefulSetName = 52

// MaxCronJobName is the longest CronJob name: its Jobs are named
// <name>-<minutes since epoch, 8 or more digits> and labelled with it (63).
const MaxCronJobName = 52

// ValidateParentName checks a parent name that also names Services (so it
// must be a DNS-1035 label: lower case, starting with a letter) and that
// every name derived from it fits its limit.
func ValidateParentName(name string, children ...ChildName) error {
	if name == "" {
		return fmt.Errorf("required")
	}
	if errs := validation.IsDNS1035Label(name); len(errs) > 0 {
		return fmt.Errorf("must be a DNS-1035 label because it names a Service (%s), got %s", strings.Join(errs, "; "), composite.Quote(name))
	}
	for _, c := range children {
		if len(c.Name) > c.Max {
			return fmt.Errorf("must be at most %d characters: %s %s would have %d, more than %d", len(name)-(len(c.Name)-c.Max), c.What, composite.Quote(c.Name), len(c.Name), c.Max)
		}
	}
	return nil
}

// maxQuantity bounds every quantity: a larger one overflows the milli-units
// the API server and resource.Quantity count in (a value past int64 is
// silently clamped to 9223372036854775807 when parsed).
var maxQuantity = resource.MustParse("8Pi")

// maxQuantityValue is maxQuantity as an int64 (it holds one exactly).
var maxQuantityValue = maxQuantity.Value()

// ValidateQuantity checks that q is not negative and within range. A whole
// number of bytes (every size as written in practice) is compared as an
// int64: Cmp of two quantities at different scales builds big numbers.
func ValidateQuantity(q resource.Quantity) error {
	if v, ok := q.AsInt64(); ok && 0 <= v && v <= maxQuantityValue {
		return nil
	}
	switch {
	case q.Sign() < 0:
		return fmt.Errorf("must not be negative, got %s", q.String())
	case q.Cmp(maxQuantity) > 0:
		if q.Value() == math.MaxInt64 {
			// Parsed past int64 and clamped: the value is not what was
			// written, so it is not quoted.
			return fmt.Errorf("out of range: at most %s", maxQuantity.String())
		}
		return fmt.Errorf("out of range: at most %s, got %s", maxQuantity.String(), q.String())
	}
	return nil
}

// ValidateResources checks container resources as the API server does:
// standard or extended resource names, quantities in range, requests at
// most limits. It returns the path of the bad entry below the resources
// field (`requests["cpu"]`) with the reason.
func ValidateResources(r corev1.ResourceRequirements) (string, error) {
	for _, list := range []struct {
		name      string
		resources corev1.ResourceList
	}{{"limits", r.Limits}, {"requests", r.Requests}} {
		for _, name := range sortedNames(list.resources) {
			path := list.name + "[" + composite.Quote(string(name)) + "]"
			if err := validateResourceName(string(name)); err != nil {
				return path, err
			}
			if err := ValidateQuantity(list.resources[name]); err != nil {
				return path, err
			}
		}
	}
	for _, name := range sortedNames(r.Requests) {
		request := r.Requests[name]
		if limit, ok := r.Limits[name]; ok && request.Cmp(limit) > 0 {
			return "requests[" + composite.Quote(string(name)) + "]", fmt.Errorf("must be less than or equal to the %s limit %s, got %s", name, limit.String(), request.String())
		}
	}
	return "", nil
}

// standardContainerResources are the resource names without a domain that a
// container may request; hugepages-<size> is the other form.
var standardContainerResources = map[corev1.ResourceName]bool{
	corev1.ResourceCPU: true, corev1.ResourceMemory: true, corev1.ResourceEphemeralStorage: true,
}

func validateResourceName(name string) error {
	if errs := validation.IsQualifiedName(name); len(errs) > 0 {
		return fmt.Errorf("invalid resource name: %s", strings.Join(errs, "; "))
	}
	domain, _, qualified := strings.Cut(name, "/")
	switch {
	case !qualified:
		if !standardContainerResources[corev1.ResourceName(name)] && !strings.HasPrefix(name, corev1.ResourceHugePagesPrefix) {
			return fmt.Errorf("must be a standard resource for containers (cpu, memory, ephemeral-storage, hugepages-<size>) or an extended resource such as example.com/gpu, got %s", composite.Quote(name))
		}
	case domain == "kubernetes.io" || strings.HasSuffix(domain, ".kubernetes.io"):
		return fmt.Errorf("must not be in the kubernetes.io domain, which is reserved for standard resources, got %s", composite.Quote(name))
	}
	return nil
}

func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for name := range list {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return names[i] < names[j] })
	return names
}

// ValidateStorageClassName checks a storageClassName: a DNS-1123 subdomain.
func ValidateStorageClassName(name string) error {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return fmt.Errorf("must be a StorageClass name, a DNS-1123 subdomain (%s), got %s", strings.Join(errs, "; "), composite.Quote(name))
	}
	return nil
}

// ValidateConfigMapData checks that data fits in one ConfigMap: the API
// server refuses keys and values of more than corev1.MaxSecretSize (1 MiB)
// in all. Keys must be valid ConfigMap keys.
func ValidateConfigMapData(data map[string]string) (string, error) {
	total := 0
	keys := make([]string, 0, len(data))
	for key, value := range data {
		keys = append(keys, key)
		total += len(key) + len(value)
	}
	sort.Strings(keys)
	for _, key := range keys {
		if errs := validation.IsConfigMapKey(key); len(errs) > 0 {
			return key, fmt.Errorf("invalid ConfigMap key: %s", strings.Join(errs, "; "))
		}
	}
	if total > corev1.MaxSecretSize {
		return "", fmt.Errorf("must hold at most %d bytes of keys and values (one ConfigMap), got %d", corev1.MaxSecretSize, total)
	}
	return "", nil
}

// ValidateLength checks that value has at most max characters, as the
// CRD's maxLength counts them (Unicode code points). It looks at no more
// than 4*max bytes of it, so it may come before anything else that reads
// the value.
func ValidateLength(value string, max int) error {
	if len(value) <= max { // a character has at least one byte
		return nil
	}
	if len(value) > utf8.UTFMax*max {
		return fmt.Errorf("must be at most %d characters, got %d bytes: %s", max, len(value), composite.Quote(value))
	}
	if n := utf8.RuneCountInString(value); n > max {
		return fmt.Errorf("must be at most %d characters, got %d: %s", max, n, composite.Quote(value))
	}
	return nil
}

// ValidateCount checks that a list or map has at most max items (the CRD's
// maxItems or maxProperties); what names them: "items", "entries".
func ValidateCount(n, max int, what string) error {
	if n > max {
		return fmt.Errorf("must have at most %d %s, got %d", max, what, n)
	}
	return nil
}
