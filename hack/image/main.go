// Command image builds metahooks' container image as a tarball, without a
// Docker daemon or a registry (`make image`): one layer holding the static
// binary given with -binary (and an /etc/passwd and /etc/group naming the
// nonroot user), on no base image, run as 65532:65532 with the Dockerfile's
// entrypoint and command. The tarball is what `docker load`, `podman load`,
// `ctr images import` and `kind load image-archive` take.
//
// The Dockerfile builds the same binary on gcr.io/distroless/static, which
// adds CA certificates and time zones; metahooks needs neither (it trusts
// only the CA files it is given, and logs in UTC).
//
// It is a module of its own (hack/image/go.mod), so go-containerregistry
// stays out of the service's dependencies.
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	binary := flag.String("binary", "", "the static metahooks binary (CGO_ENABLED=0, GOOS=linux)")
	out := flag.String("o", "bin/metahooks-image.tar", "the image tarball to write")
	tag := flag.String("tag", "metahooks:dev", "the image's name and tag in the tarball")
	arch := flag.String("arch", "amd64", "the binary's GOARCH")
	flag.Parse()
	if err := build(*binary, *out, *tag, *arch); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// user is the image's user and group, distroless's nonroot.
const user = "65532:65532"

func build(binary, out, tag, arch string) error {
	if binary == "" {
		return fmt.Errorf("give the binary with -binary")
	}
	ref, err := name.NewTag(tag)
	if err != nil {
		return fmt.Errorf("-tag: %w", err)
	}
	program, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		raw, err := layerTar(program)
		return io.NopCloser(bytes.NewReader(raw)), err
	})
	if err != nil {
		return fmt.Errorf("cannot make the layer: %w", err)
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	config, err := img.ConfigFile()
	if err != nil {
		return err
	}
	config = config.DeepCopy()
	config.OS, config.Architecture = "linux", arch
	config.Created = v1.Time{Time: time.Unix(0, 0).UTC()} // the same binary gives the same image
	config.Config.Entrypoint = []string{"/metahooks"}
	config.Config.Cmd = []string{"serve", "--addr", ":8080"}
	config.Config.User = user
	config.Config.WorkingDir = "/"
	config.Config.ExposedPorts = map[string]struct{}{"8080/tcp": {}, "9090/tcp": {}}
	config.Config.Labels = map[string]string{"org.opencontainers.image.title": "metahooks"}
	if img, err = mutate.ConfigFile(img, config); err != nil {
		return err
	}
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return fmt.Errorf("cannot write %s: %w", out, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("image: %s %s in %s\n", ref, digest, out)
	return nil
}

// layerTar is the layer: /metahooks, and the nonroot user's entries in
// /etc/passwd and /etc/group, every file owned by root and dated 0.
func layerTar(program []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{"etc/group", 0o644, []byte("root:x:0:\nnonroot:x:65532:\n")},
		{"metahooks", 0o755, program},
	}
	if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "etc/", Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, err
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
