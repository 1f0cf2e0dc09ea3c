# The kit's everyday commands. `make test` is what CI runs (.ci/run) and what authors run before
# sending a change.

GO ?= go

.PHONY: test vet fmt-check build-race lint unit unit-race unit-e2e check install fmt bench

## test: first vet, the gofmt check and the race build of every package (build-race), side by
## side; then, side by side, every package's tests (the kit's with -race, the end-to-end scripts in
## tests/) and the author's proof of every chapter. Each of the latter keeps the cores only partly
## busy (go test links and runs one binary at a time, dev check waits on its slowest job, alone
## dev check keeps 2 cores 60% busy), so together they end sooner than one after the other. Their
## output is interleaved line by line; every line says which package or chapter it is about.
##
## The first step builds the standard library and the modules, once without -race (vet) and once
## with it: started all at once on an empty build cache, the five parts each compiled them at
## the same time, since go shares a build only once it is in the cache (dev check alone compiled
## the race build twice, its first two jobs side by side, about 80 s of CPU lost, 2026-12-07).
##
## Dev check is the longest part and ends last: alone it keeps two cores only about 60% busy (its
## jobs wait for each other and for the deadlines of the tests it runs), so when it shared the
## cores equally with the rest it ran alone, half idle, for the last third of the run. The other
## parts run under $(TEST_NICE): they take what dev check leaves, and the run ends nearer the time
## its total CPU needs.
##
## The hang detectors of the tests (internal/hang) give work TEST_TIMEOUT_SCALE times their own
## bound here (COURSE_TEST_TIMEOUT_SCALE, when set, wins): the unit tests get the CPU last, by
## design, and a bound must detect a hang, not that.
##
## Every part builds with -trimpath (TEST_GOFLAGS), as do the go commands the tests and dev check
## start (gotest.OfflineEnv keeps the flag): dev check needs it to share builds between trees
## written in different directories, and a build with it and one without are different builds
## of the whole standard library and every module. With the flag in one part only, a fresh clone
## built the standard library four times (with and without -trimpath, with and without -race),
## about 75 s of CPU each (2026-12-07, docs/performance.md).
TEST_NICE ?= nice -n 5
TEST_TIMEOUT_SCALE ?= 3
TEST_GOFLAGS ?= -trimpath
##
## Staticcheck (make lint) is not part of it: on an empty cache it type-checks the standard library
## and every module from source, about 270 s of CPU (2026-12-07), a fifth of what CI's 15 minutes
## allow. Run make lint before sending a change to the kit's Go code; go vet runs here.
test:
	GOFLAGS="$(TEST_GOFLAGS)" $(MAKE) --no-print-directory -j2 --output-sync=line vet fmt-check build-race
	COURSE_TEST_TIMEOUT_SCALE="$${COURSE_TEST_TIMEOUT_SCALE:-$(TEST_TIMEOUT_SCALE)}" GOFLAGS="$(TEST_GOFLAGS)" \
		$(MAKE) --no-print-directory -j3 --output-sync=line NICE="$(TEST_NICE)" unit-race unit-e2e check

## NICE: a prefix for the commands of vet, lint, unit-race and unit-e2e; `make test` sets it for
## the last two.
NICE ?=

vet:
	$(NICE) $(GO) vet ./...

## fmt-check: fails, naming them, when files of the kit or the reference are not gofmt -s clean.
fmt-check:
	@files="$$(gofmt -s -l cmd internal solutions tests content.go)"; \
	if [ -n "$$files" ]; then echo "not gofmt -s clean (run make fmt):"; echo "$$files"; exit 1; fi

## build-race: every package built with -race, into go's build cache only (make test's first step).
build-race:
	$(NICE) $(GO) build -race ./...

## lint: staticcheck over every package, at the version go.mod pins (tool directive).
lint:
	$(NICE) $(GO) tool staticcheck ./...

## unit: every package's tests, in two halves side by side. unit-race: every package of the kit
## but tests/, with -race. The reference (solutions/) is not among them: its tests are every
## chapter's focused tests, and dev check's rule 1 already runs them all, with go vet and -race,
## on chapter 14's target, which is the reference file for file (plus go.mod); running them here
## too cost a second race build of the package and a second run of every chapter's tests. unit-e2e: the end-to-end scripts of tests/, which run the real course command (the
## test binary itself) hundreds of times as a subprocess. They run without -race: under the race
## detector the command's own work (building trees, gofmt, git) takes three times the CPU, and what
## the scripts test is behaviour; the concurrency of the code they run (internal/cli, watch,
## serve, devcheck, gotest...) is tested with -race in its own packages.
## Both run with -timeout 60m instead of go test's default 10m: the timeout is a hang detector
## for the whole binary, not a speed limit (every command the scripts run has its own bound). The
## end-to-end scripts share two cores with dev check under make test: on a machine half as fast
## as CI's (2026-12-04) they took 13 min alone, and on a loaded one (2026-12-07, load about 30)
## 25m was not enough: every script still running then dies with "test timed out" though nothing
## is wrong. The run's own length is what CI judges.
unit:
	$(MAKE) --no-print-directory -j2 unit-race unit-e2e

unit-race:
	$(NICE) $(GO) tool gotestsum --format testname -- -race -timeout 60m $$($(GO) list ./... | grep -v -e '/tests$$' -e '/solutions/')

unit-e2e:
	$(NICE) $(GO) tool gotestsum --format testname -- -timeout 60m ./tests

## check: course dev check over every chapter (see docs/authoring.md). A chapter whose proof the
## cache keeps, none of its inputs changed, is not proven again; DEVCHECK_FLAGS=--force proves
## every chapter, as CI does (.ci/run).
DEVCHECK_FLAGS ?=

##
## The course command is told where its source is (devcheck.BuiltFrom): built with -trimpath (make
## test), it could not find it, and a change of content would then prove every chapter again
## instead of those it touches (devcheck.KitIdentity). Without -trimpath it would be a build of
## its own of the standard library and every module.
check:
	$(GO) run -ldflags "-X github.com/learn-tinypi/course/internal/devcheck.BuiltFrom=$(CURDIR)" ./cmd/course dev check $(DEVCHECK_FLAGS)

## bench: the benchmarks of the reference runtime and the kit (internal/perf) and of course dev
## check (internal/devcheck), then benchstat: a comparison with the previous `make bench` when
## there is one. Results go to $(BENCH_DIR) (new.txt; the run before is kept as old.txt). Run it
## on a quiet machine; docs/performance.md has the latest table and how to read it.
BENCH_DIR ?= .benchresults
BENCH_COUNT ?= 6
BENCH_KIT_FLAGS ?= -benchtime 1x -count 5
BENCH_DEVCHECK_FLAGS ?= -benchtime 1x -count 3
bench:
	mkdir -p $(BENCH_DIR)
	if [ -f $(BENCH_DIR)/new.txt ]; then mv $(BENCH_DIR)/new.txt $(BENCH_DIR)/old.txt; fi
	rm -f $(BENCH_DIR)/new.tmp
	$(GO) test -run '^$$' -bench 'Loop[A-Z]|Batch|Stream|Validate|Scripted|ReadSSE|Provider|Proxy|Read10MB|Edit10MB|BashStartup|Session|LogReader|LogFirstScreen|Resume|DecodeJSONL' -benchmem -count $(BENCH_COUNT) -timeout 60m ./internal/perf >>$(BENCH_DIR)/new.tmp || { cat $(BENCH_DIR)/new.tmp; exit 1; }
	$(GO) test -run '^$$' -bench 'Kit|LearnerLoop' $(BENCH_KIT_FLAGS) ./internal/perf >>$(BENCH_DIR)/new.tmp || { cat $(BENCH_DIR)/new.tmp; exit 1; }
	$(GO) test -run '^$$' -bench . $(BENCH_DEVCHECK_FLAGS) ./internal/devcheck >>$(BENCH_DIR)/new.tmp || { cat $(BENCH_DIR)/new.tmp; exit 1; }
	mv $(BENCH_DIR)/new.tmp $(BENCH_DIR)/new.txt
	cat $(BENCH_DIR)/new.txt
	if [ -f $(BENCH_DIR)/old.txt ]; then $(GO) tool benchstat $(BENCH_DIR)/old.txt $(BENCH_DIR)/new.txt; \
	else $(GO) tool benchstat $(BENCH_DIR)/new.txt; fi

## install: put the course command in $(go env GOBIN) or $(go env GOPATH)/bin.
install:
	$(GO) install ./cmd/course

## fmt: gofmt -s every Go file of the kit and the reference.
fmt:
	gofmt -s -w cmd internal solutions tests content.go
