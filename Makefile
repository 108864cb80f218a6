# strata — build, demo, tests and benchmarks.
GO       ?= go
BIN      := bin/strata
PKGS     := ./...
# Two cores: keep test parallelism modest. Every test runs under the race
# detector.
TESTFLAGS ?= -race -p 2 -count=1 -timeout 25m
# Build tags of every build and test, as the release is built
# (.goreleaser.yaml): without code whose initialisation every command would
# pay for at start: urfave/cli's Markdown and man page generator, and the
# Google Cloud Storage client's gRPC DirectPath (strata uses its JSON API;
# about 10 ms of every start).
TAGS     := urfave_cli_no_docs,disable_grpc_modules

.PHONY: all build install release demo test pictures test-short test-engines bench bench-scale fuzz vet fmt schema clean tools

all: build

# As the release is built (.goreleaser.yaml): static, with TAGS.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags $(TAGS) -o $(BIN) ./cmd/strata

# Install strata from this clone into GOBIN (go env GOBIN, else
# GOPATH/bin), built as the release is; the version is the clone's commit.
install:
	CGO_ENABLED=0 $(GO) install -trimpath -tags $(TAGS) -ldflags "-X main.version=$$(git describe --tags --always --dirty 2>/dev/null || echo dev)" ./cmd/strata

# The release archives (docs/ci.md#release-archives), built as
# .goreleaser.yaml describes them with the Go toolchain alone: for each
# platform of PLATFORMS (os/arch, comma-separated; every platform of a
# release by default), strata_<version>_<os>_<arch>.tar.gz (.zip for
# Windows), and checksums.txt, into DIST. The binaries report VERSION; the
# archives' entries carry the commit's time, so two builds of one commit
# are identical byte for byte.
VERSION           ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
DIST              ?= dist
PLATFORMS         ?=

release:
	$(GO) run ./tools/release -version "$(VERSION)" -date "$(SOURCE_DATE_EPOCH)" -dist "$(DIST)" -platforms "$(PLATFORMS)"

# Build strata and run it on a copy of the nested-stacks fixture: check,
# stacks, the graph, then plan, apply and a second plan with nothing to do;
# then on a copy of the two-region fixture: its stack instances, applied,
# planned again, and one instance planned alone.
demo: build
	@dir=$$(mktemp -d) && cp -r fixtures/nested/. $$dir && cd $$dir && set -x && \
	$(CURDIR)/$(BIN) check && $(CURDIR)/$(BIN) stacks && $(CURDIR)/$(BIN) graph --format mermaid && \
	$(CURDIR)/$(BIN) plan && $(CURDIR)/$(BIN) apply -auto-approve && $(CURDIR)/$(BIN) plan && \
	echo "demo repository: $$dir"
	@dir=$$(mktemp -d) && cp -r fixtures/regions/. $$dir && cd $$dir && set -x && \
	$(CURDIR)/$(BIN) check && $(CURDIR)/$(BIN) stacks && $(CURDIR)/$(BIN) graph --format mermaid && \
	$(CURDIR)/$(BIN) apply -auto-approve && $(CURDIR)/$(BIN) plan && $(CURDIR)/$(BIN) plan --stack 'app[eu]' && \
	echo "demo repository: $$dir"

# Tools the tests run, installed from the Go module proxy into bin/tools.
TOOLS      := $(CURDIR)/bin/tools
ACTIONLINT := github.com/rhysd/actionlint/cmd/actionlint@v1.7.12
# An S3 server on a POSIX directory, for the object store's tests on loopback.
VERSITYGW  := github.com/versity/versitygw/cmd/versitygw@v1.8.0
# A Google Cloud Storage server in memory, for the object store's gs://
# tests on loopback.
FAKE_GCS   := github.com/fsouza/fake-gcs-server@v1.56.1
# Runs a GitLab pipeline on this machine, for the GitLab test of ci; from
# npm. Child pipelines (trigger: include: artifact) came in 4.66; 4.74 and
# later need node 22.
GITLAB_CI_LOCAL := gitlab-ci-local@4.73.0
# Azure's storage emulator, for the object store's azblob:// tests on
# loopback; from npm, in a prefix of its own: an npm install --no-save
# removes from its prefix what it did not install itself. 3.36 and later
# need node 21.
AZURITE    := azurite@3.35.0
# Mermaid's browser bundle, which the summary's picture draws its Mermaid
# block with; from npm, in a prefix of its own. 12.0 and later need node 22.
MERMAID    := mermaid@11.17.2

tools: $(TOOLS)/actionlint $(TOOLS)/versitygw $(TOOLS)/fake-gcs-server $(TOOLS)/gitlab-ci-local $(TOOLS)/azurite-blob $(TOOLS)/mermaid.min.js $(TOOLS)/shellcheck

$(TOOLS)/actionlint:
	GOBIN=$(TOOLS) GOFLAGS= $(GO) install $(ACTIONLINT)

# shellcheck from Debian's package, unpacked (no root needed once apt's
# lists are there), or the one on PATH.
$(TOOLS)/shellcheck:
	mkdir -p $(TOOLS)
	if command -v shellcheck >/dev/null 2>&1; then ln -sf "$$(command -v shellcheck)" $@; else \
	  d=$$(mktemp -d) && cd $$d && { apt-get download shellcheck >/dev/null 2>&1 || { apt-get update -qq && apt-get download shellcheck; }; } && \
	  dpkg -x shellcheck_*.deb x && cp x/usr/bin/shellcheck $(abspath $@) && rm -rf $$d; fi

$(TOOLS)/versitygw:
	GOBIN=$(TOOLS) GOFLAGS= $(GO) install $(VERSITYGW)

$(TOOLS)/fake-gcs-server:
	GOBIN=$(TOOLS) GOFLAGS= $(GO) install $(FAKE_GCS)

$(TOOLS)/gitlab-ci-local:
	npm install --prefix $(TOOLS)/npm --no-audit --no-fund --no-save $(GITLAB_CI_LOCAL)
	ln -sf npm/node_modules/.bin/gitlab-ci-local $@

$(TOOLS)/azurite-blob:
	npm install --prefix $(TOOLS)/azurite --no-audit --no-fund --no-save $(AZURITE)
	ln -sf azurite/node_modules/.bin/azurite-blob $@

$(TOOLS)/mermaid.min.js:
	npm install --prefix $(TOOLS)/mermaid --no-audit --no-fund --no-save $(MERMAID)
	ln -sf mermaid/node_modules/mermaid/dist/mermaid.min.js $@

test: vet tools
	PATH="$(TOOLS):$$PATH" STRATA_TEST_TOOLS=1 $(GO) test -tags $(TAGS) $(TESTFLAGS) $(PKGS)

# The pictures under docs/: the browser tests draw the graph page and the
# summary of real runs of fixtures/nested (terraform on PATH, Debian's
# chromium) and keep their screenshots there, shrunk by optipng when it is
# on PATH.
pictures: $(TOOLS)/mermaid.min.js
	STRATA_TEST_TOOLS=1 STRATA_SCREENSHOT_DIR=$(CURDIR)/docs $(GO) test -tags $(TAGS) -count=1 -run '^(TestGraphHTMLInBrowser|TestSummaryInBrowser)$$' -v ./cmd/strata/
	if command -v optipng >/dev/null 2>&1; then optipng -quiet -o2 docs/graph.png docs/summary.png; fi

test-short:
	$(GO) test -short -tags $(TAGS) $(TESTFLAGS) $(PKGS)

# Installs terraform 1.5.7 and tofu 1.8.8 by building them from the Go module
# proxy into a cache kept between runs (slow the first time only). The CLI's
# test uses the engines the first step installs, so the two run in turn.
test-engines:
	STRATA_E2E_ENGINES=1 $(GO) test -count=1 -timeout 60m -run E2E -v ./engines/...
	STRATA_E2E_ENGINES=1 $(GO) test -count=1 -timeout 20m -run E2E -v ./cmd/strata/

# Go benchmarks, then the scale benchmarks (docs/architecture.md#the-graph:
# check, ls, graph, ci start and a plan before the engines on generated
# repositories of 10,000 and 50,000 units, once each, one package at a
# time), then the provider benchmark (bench/providers/README.md): inits of
# 200 modules on two real providers, cold and warm, beside xargs -P4 and
# the peers named by TERRAGRUNT_BIN and TERRAMATE_BIN.
bench: build
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchmem -benchtime 5x -cpu 2 $(PKGS)
	$(BENCH_SCALE)
	$(GO) run bench/providers/main.go -strata $(CURDIR)/$(BIN) -modules 200 -rounds 3 -reps 20 \
	  $(if $(TERRAGRUNT_BIN),-terragrunt $(TERRAGRUNT_BIN)) $(if $(TERRAMATE_BIN),-terramate $(TERRAMATE_BIN))

# The scale benchmarks alone. They are skipped unless STRATA_BENCH_SCALE=1,
# so the line above (-bench .) does not run them five times each.
BENCH_SCALE = STRATA_BENCH_SCALE=1 $(GO) test -tags $(TAGS) -run '^$$' -bench '^BenchmarkScale' -benchmem -benchtime 1x -cpu 2 -p 1 -timeout 60m ./cmd/strata ./runner

bench-scale:
	$(BENCH_SCALE)

# Short fuzzing pass over every parser.
fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./stacks/tagquery
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 30s ./stacks/config
	$(GO) test -run '^$$' -fuzz FuzzLoad -fuzztime 30s ./stacks
	$(GO) test -run '^$$' -fuzz FuzzReadPlanZip -fuzztime 30s ./job
	$(GO) test -run '^$$' -fuzz FuzzTree -fuzztime 30s ./stacks
	$(GO) test -run '^$$' -fuzz FuzzBaseJoin -fuzztime 30s ./internal/safepath
	$(GO) test -run '^$$' -fuzz FuzzReadVersion -fuzztime 30s ./internal/tfstate
	$(GO) test -run '^$$' -fuzz FuzzBackendConfig -fuzztime 30s ./internal/tfstate
	$(GO) test -run '^$$' -fuzz FuzzStrip -fuzztime 30s ./internal/ansi
	$(GO) test -run '^$$' -fuzz FuzzReads -fuzztime 30s ./internal/reads
	$(GO) test -run '^$$' -fuzz FuzzRestoredRecord -fuzztime 30s ./runstate
	$(GO) test -run '^$$' -fuzz FuzzParseComment -fuzztime 30s ./controls
	$(GO) test -run '^$$' -fuzz FuzzRecord -fuzztime 30s ./history

vet:
	$(GO) vet $(PKGS)

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin dist
