# syntax=docker/dockerfile:1
#
# docker build --build-arg VERSION=$(git describe --tags --always --dirty) -t metahooks:dev .
#
# The builder runs on the build machine's platform and cross-compiles for the
# target one (docker buildx build --platform linux/amd64,linux/arm64 ...).
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
WORKDIR /src
# Dependencies first, so a source change does not download them again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod \
    go mod download
COPY . .
ARG VERSION=dev
ARG TARGETOS
ARG TARGETARCH
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -buildvcs=false \
      -ldflags "-s -w -X main.version=${VERSION}" \
      -o /out/metahooks ./server

# Static, no shell, no package manager; the nonroot variant runs as 65532.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/metahooks /metahooks
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/metahooks"]
CMD ["serve", "--addr", ":8080"]
