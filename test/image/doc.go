// Package image tests `make image`: the container image built without a
// Docker daemon (hack/image), loaded from its tarball as a container
// runtime loads it.
package image
