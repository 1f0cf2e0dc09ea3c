# The kit's everyday commands. `make test` is what CI runs (.ci/run) and what authors run before
# sending a change.

GO ?= go

.PHONY: test vet unit check install fmt

## test: vet, every package's tests with -race (the reference's focused tests, the kit, the
## end-to-end scripts in tests/), then the author's proof of every chapter.
test: vet unit check

vet:
	$(GO) vet ./...

unit:
	$(GO) tool gotestsum --format testname -- -race ./...

## check: course dev check over every chapter (see docs/authoring.md). A chapter whose proof the
## cache keeps, none of its inputs changed, is not proven again; DEVCHECK_FLAGS=--force proves
## every chapter, as CI does (.ci/run).
DEVCHECK_FLAGS ?=

check:
	$(GO) run ./cmd/course dev check $(DEVCHECK_FLAGS)

## install: put the course command in $(go env GOBIN) or $(go env GOPATH)/bin.
install:
	$(GO) install ./cmd/course

## fmt: gofmt -s every Go file of the kit and the reference.
fmt:
	gofmt -s -w cmd internal solutions tests content.go
