# The kit's everyday commands. `make test` is what CI runs (.ci/run) and what authors run before
# sending a change.

GO ?= go

.PHONY: test vet lint unit check install fmt

## test: vet, staticcheck, every package's tests with -race (the reference's focused tests, the
## kit, the end-to-end scripts in tests/), then the author's proof of every chapter.
test: vet lint unit check

vet:
	$(GO) vet ./...

## lint: staticcheck over every package, at the version go.mod pins (tool directive).
lint:
	$(GO) tool staticcheck ./...

unit:
	$(GO) tool gotestsum --format testname -- -race ./...

## check: course dev check over every chapter (see docs/authoring.md).
check:
	$(GO) run ./cmd/course dev check

## install: put the course command in $(go env GOBIN) or $(go env GOPATH)/bin.
install:
	$(GO) install ./cmd/course

## fmt: gofmt -s every Go file of the kit and the reference.
fmt:
	gofmt -s -w cmd internal solutions tests content.go
