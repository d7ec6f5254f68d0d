# metahooks: `make run` starts the hook service on :8080, `make test` runs every test.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)
# make image: the static binary it builds, and the image tarball it writes.
IMAGE_BINARY ?= bin/metahooks-linux
IMAGE_OUT ?= bin/metahooks-image.tar
ADDR ?= :8080
METRICS_ADDR ?= :9090
GO ?= go
# The image the reporter containers of Databases with instances >= 2 run:
# metahooks itself (docker build -t metahooks:dev .).
AGENT_IMAGE ?= metahooks:dev

.PHONY: all build run test unit image e2e vet fmt-check bench fuzz generate kube-binaries clean

all: build

build: ## Build bin/metahooks
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/metahooks ./server

# A development credentials key for the Database hook, made once per checkout
# (bin/ is not committed). In a cluster the key comes from a Secret.
bin/dev-credentials-key:
	@mkdir -p bin && head -c 32 /dev/urandom | base64 > $@ && echo "made $@ (development only)"

# A development bearer token, made once per checkout: the hooks answer only a
# request with `Authorization: Bearer $$(cat bin/dev-token)`.
bin/dev-token:
	@mkdir -p bin && (umask 077 && head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > $@ && echo >> $@) && echo "made $@ (development only)"

run: build bin/dev-credentials-key bin/dev-token ## Serve the hooks on $(ADDR) (bearer token bin/dev-token), /metrics on $(METRICS_ADDR)
	./bin/metahooks serve --addr $(ADDR) --metrics-addr $(METRICS_ADDR) --credentials-key-file bin/dev-credentials-key --auth-token-file bin/dev-token --instance-agent-image $(AGENT_IMAGE)

# etcd, kube-apiserver, kube-controller-manager, kube-scheduler (every minor in
# hack/kube-binaries/v1.*) and kwok for the e2e tests, built from Go modules once
# and cached outside the repo (see hack/kube-binaries/README.md).
kube-binaries:
	@for minor in $$(hack/kube-binaries/build.sh --minors); do hack/kube-binaries/build.sh $$minor >/dev/null; done

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# gofmt, vet, the unit tests, then e2e; the kube binaries of every minor build
# in the background from the start, at nice 19 (hack/test.sh says why).
test: ## Every test: gofmt, vet, unit, golden, HTTP, CRD freshness, real PostgreSQL, then e2e on each Kubernetes minor
	hack/test.sh

image: ## Build bin/metahooks-image.tar, the container image, without Docker (hack/image; load it with docker/podman load or kind load image-archive)
	mkdir -p bin && CGO_ENABLED=0 GOOS=linux $(GO) build -trimpath -buildvcs=false -ldflags "$(LDFLAGS)" -o $(IMAGE_BINARY) ./server
	cd hack/image && $(GO) run . -binary $(abspath $(IMAGE_BINARY)) -o $(abspath $(IMAGE_OUT)) -tag metahooks:$(VERSION) -arch $$($(GO) env GOARCH)

e2e: ## Only the e2e tests, on each Kubernetes minor (binaries built once, then cached)
	hack/e2e.sh

unit: ## Tests that need no API server (PostgreSQL installed when missing)
	PG_BINDIR="$$(hack/postgresql.sh)" $(GO) test -count=1 $$($(GO) list ./... | grep -v /test/e2e)

# Go benchmarks, then the load benchmark: the real binary against the HTTP
# floor (bench/floor) and the Python peer hook, over loopback; then the
# instructions each runs per request under valgrind (bench/instructions),
# the figure that does not move with the host.
bench: build ## Benchmarks (figures in BENCHMARKS.md)
	mkdir -p bin && $(GO) test -run '^$$' -bench . -benchmem -count 6 ./hooks/... ./server/ | tee bin/bench.txt
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/floor ./bench/floor
	$(GO) run ./bench/loadbench -metahooks bin/metahooks -floor bin/floor | tee bin/loadbench.txt
	$(GO) run ./bench/floods -metahooks bin/metahooks | tee bin/floods.txt
	$(GO) run ./bench/instructions -metahooks bin/metahooks -floor bin/floor | tee bin/instructions.txt

# Fuzz each target for FUZZTIME (make test runs their seed corpora only).
# Each input that finds new coverage is minimized for FUZZMINIMIZETIME
# before fuzzing goes on; Go's default, 60s, spends whole runs minimizing the
# 20-46 KB seed requests (32 execs in 30 s), so it is a count of runs here.
# A crasher is shrunk only as far as that many runs get: rerun with more.
FUZZTIME ?= 30s
FUZZMINIMIZETIME ?= 100x
FUZZ_TARGETS := ./hooks/composite:FuzzScanner ./hooks/composite:FuzzDecodeRequest ./hooks/composite:FuzzPrefetch ./hooks/composite:FuzzDecodePaths ./server:FuzzMyAppSync ./server:FuzzMyAppFinalize \
	./server:FuzzDatabaseSync ./server:FuzzDatabaseFinalize ./server:FuzzDatabaseCustomize
fuzz: ## Fuzz every target for FUZZTIME each
	for t in $(FUZZ_TARGETS); do $(GO) test -run '^$$' -fuzz "^$${t#*:}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) "$${t%%:*}" || exit 1; done

generate: ## Regenerate CRDs and deepcopy code from api/
	hack/generate.sh

clean:
	rm -rf bin
