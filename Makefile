# gong — the two commands a newcomer needs are `make demo` and `make test`.
SWIFT ?= swift
PREFIX ?= /usr/local
DEMO_FILE ?= out/demo.wav

.PHONY: all deps build build-commit gong-path lib static-lib dist dist-check demo test test-suites test-builds tsan-build test-tsan test-long test-long-suites test-snapcast lint format install uninstall bench bench-suite bench-thresholds clean sounds

all: build

deps:
	@scripts/install-deps.sh build

# The gong people run: optimised, with the Swift runtime linked in, so it runs where no Swift
# toolchain is installed and starts without the dynamic linker resolving Foundation (about 6 ms
# of CPU at every start). Built in a scratch directory of its own: SwiftPM rebuilds everything
# when a runtime linked in and one linked dynamically (libgong.so, below) alternate in one.
GONG = .build/static/release/gong
# SwiftPM links the runtime statically into executables only; -static-stdlib handed to swiftc
# as well does it for libgong.so too (see static-lib). Both products use the same flags, so they
# share one build. -z now: every symbol bound at start, so the relocations can be made read-only
# (what Debian's hardening checks a packaged binary for; lintian: hardening-no-bindnow).
# Smaller without being slower (bench/RESULTS.md, "Lean again"): each Swift function in a section
# of its own, so the linker's --gc-sections (SwiftPM passes it) drops the ones nothing calls
# rather than keeping a whole file for one; and no symbol exported that no one looks up: the
# static runtime's link arguments export every symbol of an executable (-export-dynamic), which
# costs gong its symbol table and keeps all of it alive, and libgong.so exports only its C
# interface, gong_* (packaging/libgong.map; the runtime in it is hidden already). Optimised for
# size (-Osize) but for the code a real-time thread runs, which Package.swift keeps at -O: most of
# gong is the CLI, the remote's swift-nio, the history and argument-parser, where size is what
# counts; the mixer and the engines run at full speed. And functions whose code is identical
# stored once (--icf=all; the Swift functions are in sections of their own already). Figures:
# bench/RESULTS.md, "Lean: gong under 20 MB". GONG_RELEASE_FOR_SIZE tells Package.swift to keep
# the real-time code at -O (a flag it can give only as an unsafe flag, which SwiftPM refuses in a
# package depended on by URL, so it gives it only when asked).
STATIC = -c release --static-swift-stdlib -Xswiftc -static-stdlib -Xlinker -znow --scratch-path .build/static \
  -Xswiftc -Xfrontend -Xswiftc -function-sections -Xlinker --no-export-dynamic \
  -Xlinker --version-script=$(CURDIR)/packaging/libgong.map -Xswiftc -Osize -Xlinker --icf=all
build: deps build-commit
	GONG_RELEASE_FOR_SIZE=1 $(SWIFT) build $(STATIC) --product gong

# The commit `gong --version` names, written where the build reads it (scripts/build-commit.sh).
build-commit:
	@scripts/build-commit.sh

# Where `make build` puts gong, for the benchmarks, which measure the binary people run.
gong-path:
	@echo $(GONG)

# libgong.so and its header include/gong.h, the C interface (see docs/embedding.md). SwiftPM
# names the product libGongABI.so (a product cannot share the executable's name gong); it has no
# SONAME, so the copy under the documented name is what programs link against.
CONFIGURATION ?= release
lib: deps build-commit
	$(SWIFT) build -c $(CONFIGURATION) --product GongABI
	cp .build/$(CONFIGURATION)/libGongABI.so .build/$(CONFIGURATION)/libgong.so

# A short two-phase session: start gong, 40 s meditation, triple gong, 20 s reflection, end gong,
# played live; where no device can play it, rendered to a file instead.
DEVICE ?= auto
DEMO_SESSION = two-phase --set meditation=40s --set reflection=20s
demo: build
	@mkdir -p $(dir $(DEMO_FILE))
	@$(GONG) run $(DEMO_SESSION) --device $(DEVICE) || { \
	  echo "gong: nothing could play on '$(DEVICE)' here (no sound card?); rendering the session to $(DEMO_FILE) instead"; \
	  $(GONG) render $(DEMO_SESSION) -o $(DEMO_FILE) && echo "Listen with: aplay $(DEMO_FILE)"; }

# The source's layout first (lint, below); then the test sound servers with their null sinks
# (PulseAudio, and PipeWire in a private runtime directory) and a JACK server on its dummy
# driver, all stopped again when the tests end, passed or failed (a PulseAudio that was running
# before keeps running; only the keeper stream put on it ends); everything but the
# real-time tests, side by side; then the real-time tests alone (they measure timing to the frame
# through a sound server, which a CPU-bound test suite beside them would disturb as it would a
# sound card; the Snapcast rooms among them start servers of their own; the remote's browser
# test too: two phones see a pause within 200 ms, and the cues marked as the room hears them; and a
# pulled session's cues announced ahead at a device's pace); then, side by side, the lock-free
# rings and the real-time engines (push, and pulled by a host thread while commands come from
# another) again under the thread sanitizer, the embedding examples (C, Python, Swift; pushed to
# a device and pulled by the host) and the release files, run where the Swift toolchain cannot
# be reached (dist-check): none of them judges timing to the frame (docs/testing.md says how
# long each took alone). The servers are started
# under the same trap that stops them, so a server that fails to start does not leave the others
# running; and every process started carries GONG_TEST_RUN in its environment, so that
# scripts/check-leftovers.sh can tell, at the very end, that none of them is still alive (else
# make test fails, naming them). GONG_MAKE_TEST tells the tests and scripts that everything was
# started for them: a test that cannot reach a server, a tool or root fails, naming it, where a
# developer's `swift test` by hand would skip it.
#
# The long rounds (a ten-minute bed, the Snapcast rooms' six minutes a source, bells a minute
# apart, the minute to the frame on routes the shorter tests also play) are in suites named
# LongRound…Tests: `make test` leaves them out by name, and `make test-long` runs them alone,
# real-time, with the same servers (docs/testing.md says when). A filter is matched against a
# test's whole ID, its file's name included: REALTIME_TESTS selects LongRoundSnapcastTests,
# in LiveSnapcastTests.swift, too, and the skip takes it out again.
LONG_TESTS = LongRound
# make itself, named through another variable: a line that names $(MAKE) runs even under
# `make -n`, and these start and stop the test servers and run the real-time tests.
SUBMAKE = $(MAKE)
SNAPCAST_TESTS = LiveSnapcastTests
# The real-time tests run in two lanes at once, one test at a time in each, as nothing in one
# lane plays through, records or restarts a server of the other's: the PulseAudio and PipeWire
# rigs' (pw-jack's tests among them, on PipeWire's graph: one stops its daemon now and then), and
# jackd's and the Snapcast rooms' own PulseAudio. Each test mostly waits on its server's clock,
# so side by side they take little more than the longer lane (bench/RESULTS.md, stop 52).
REALTIME_SERVERS = LivePulseTests|PulseClientTests|BenchPulseTests|LivePulledAnnouncementTests|RemoteBrowserTests|RemoteKillTests|pipeWiresJack
REALTIME_OWN_SERVERS = LiveJackTests|$(SNAPCAST_TESTS)
REALTIME_TESTS = $(REALTIME_SERVERS)|$(REALTIME_OWN_SERVERS)
WITH_TEST_SERVERS = export GONG_TEST_RUN=make-test-$$$$ GONG_MAKE_TEST=1; \
  trap 'status=$$?; scripts/test-jack.sh stop; scripts/test-pipewire.sh stop; scripts/test-pulse.sh stop; \
    scripts/check-leftovers.sh || status=1; exit $$status' EXIT; \
  trap 'exit 130' INT TERM HUP; \
  scripts/test-pulse.sh && scripts/test-pipewire.sh >/dev/null && scripts/test-jack.sh >/dev/null &&
# The test binary `swift build --build-tests` made, run as `swift test --skip-build` would run it
# but without SwiftPM between it and the log: on a busy machine `swift test` passed on the exit
# status but lost the end of what the tests printed (the failures among it, and the summary;
# traced: the test process printed it all and exited normally). NO_COLOR: a log, not a terminal.
RUN_TESTS = env NO_COLOR=1 .build/debug/gongPackageTests.xctest --testing-library swift-testing
test: lint
	@scripts/install-deps.sh test
	@$(WITH_TEST_SERVERS) $(SUBMAKE) --no-print-directory test-suites

# What `make test` runs once the servers are up (by itself it starts none). gong is built four
# ways, each once: debug with the tests (shared by the unit tests, the real-time tests and the C
# and Python examples' libgong.so), the Swift example's own, TSan's, and the release's. The
# real-time tests leave the CPU nearly idle for minutes, so the last three are built meanwhile,
# and the release files made from the last (make dist; dist-check then runs on them),
# all at SCHED_IDLE (test-builds): they get only the time nothing else wants, and the sound
# servers, gong and the recorders take the CPU from them whenever they ask; once the real-time
# tests are over, what is still building is lifted to the normal policy (twice over, to catch
# a compiler started meanwhile), or on a busy machine it waited behind the load for minutes
# (bench/RESULTS.md, stop 52). What they print goes
# to .build/test-builds.log, shown if one fails; the steps after them find them built. They run
# in a session of their own, so that an interrupted run ends them all (a background job ignores
# the terminal's Ctrl-C); so do the examples and dist-check beside the sanitizer's tests, their
# output kept apart and printed whole after it.
test-suites: build-commit
	$(SWIFT) build --build-tests
	scripts/check-doc-commands.py --gong .build/debug/gong
	$(RUN_TESTS) --skip '$(REALTIME_TESTS)|$(LONG_TESTS)'
	@setsid -w chrt --idle 0 $(SUBMAKE) --no-print-directory test-builds >.build/test-builds.log 2>&1 & builds=$$!; \
	  setsid -w $(RUN_TESTS) --no-parallel --filter '$(REALTIME_OWN_SERVERS)' \
	    --skip '$(LONG_TESTS)|pipeWiresJack' >.build/test-realtime-own-servers.log 2>&1 & own=$$!; \
	  trap 'kill -TERM -- -$$builds -$$own 2>/dev/null; exit 130' INT TERM HUP; \
	  $(RUN_TESTS) --no-parallel --filter '$(REALTIME_SERVERS)' --skip '$(LONG_TESTS)'; status=$$?; \
	  wait $$own; own=$$?; cat .build/test-realtime-own-servers.log; \
	  [ $$own = 0 ] || { status=1; echo "make test: the real-time tests on JACK and Snapcast failed" >&2; }; \
	  for pass in 1 2; do for pid in $$(pgrep -s $$builds); do chrt --other -p 0 $$pid 2>/dev/null; done; done; \
	  wait $$builds || { status=1; cat .build/test-builds.log; echo "make test: a build beside the real-time tests failed" >&2; }; \
	  exit $$status
	@setsid -w scripts/test-examples.sh >.build/test-examples.log 2>&1 & examples=$$!; \
	  setsid -w scripts/dist-check.sh >.build/dist-check.log 2>&1 & check=$$!; \
	  trap 'kill -TERM -- -$$examples -$$check 2>/dev/null; exit 130' INT TERM HUP; \
	  $(SUBMAKE) --no-print-directory test-tsan; status=$$?; \
	  wait $$examples; examples=$$?; cat .build/test-examples.log; \
	  [ $$examples = 0 ] || { status=1; echo "make test: scripts/test-examples.sh failed" >&2; }; \
	  wait $$check; check=$$?; cat .build/dist-check.log; \
	  [ $$check = 0 ] || { status=1; echo "make test: scripts/dist-check.sh failed" >&2; }; \
	  exit $$status

test-builds: dist tsan-build
	$(SWIFT) build --package-path Examples/swift --scratch-path .build-examples

# The rings and the real-time engines under the thread sanitizer, in a scratch directory of its
# own (instrumented code cannot share the debug build's). Only the test targets holding them are
# built, with what they depend on (GONG_TEST_TARGETS, read by Package.swift): not gong, its
# benchmarks, its terminal or the CLI's tests, which it never runs. A filter matches a test's file
# name too: GongSessionPullTests.swift holds LivePulledAnnouncementTests, a real-time test that
# runs alone among the real-time ones and is no test of threads, so it is skipped here by name.
TSAN_TESTS = SPSCRingTests|FrameRingTests|PlaybackEngineTests|LiveSessionDeviceLossTests|PullEngineTests|GongSessionPullTests
TSAN_SKIP = LivePulledAnnouncementTests
TSAN = --sanitize=thread --scratch-path .build-tsan
TSAN_TARGETS = GONG_TEST_TARGETS=GongCoreTests,GongAudioTests,GongKitTests
tsan-build:
	$(TSAN_TARGETS) $(SWIFT) build $(TSAN) --product gongPackageTests

test-tsan: tsan-build
	$(TSAN_TARGETS) $(SWIFT) test $(TSAN) --skip-build --filter '$(TSAN_TESTS)' --skip '$(TSAN_SKIP)'

# The long rounds, alone, with the servers `make test` starts: before resolving work on the
# engine or a route (docs/testing.md); their figures go to bench/RESULTS.md.
test-long:
	@scripts/install-deps.sh test
	@$(WITH_TEST_SERVERS) $(SUBMAKE) --no-print-directory test-long-suites

test-long-suites: build-commit
	$(SWIFT) build --build-tests
	$(RUN_TESTS) --no-parallel --filter '$(LONG_TESTS)'

test-snapcast: build-commit
	@scripts/install-deps.sh test
	$(SWIFT) build --build-tests
	@export GONG_TEST_RUN=make-test-snapcast-$$$$; trap 'status=$$?; scripts/check-leftovers.sh || status=1; exit $$status' EXIT; \
	  $(RUN_TESTS) --no-parallel --filter '$(SNAPCAST_TESTS)|LongRoundSnapcastTests'

# The layout .swift-format describes (120 columns), checked by `make test`; `make format`
# rewrites the tree to it. swift-format ships with the toolchain.
FORMATTED = Package.swift Sources Tests Examples bench/Package.swift bench/Sources bench/Benchmarks
lint:
	$(SWIFT) format lint --strict --recursive $(FORMATTED)

format:
	$(SWIFT) format format --in-place --recursive $(FORMATTED)

install: build lib
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/gong/sounds $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 755 $(GONG) $(DESTDIR)$(PREFIX)/bin/gong
	install -m 755 .build/release/libgong.so $(DESTDIR)$(PREFIX)/lib/libgong.so
	install -m 644 include/gong.h $(DESTDIR)$(PREFIX)/include/gong.h
	install -m 644 Sounds/*.flac $(DESTDIR)$(PREFIX)/share/gong/sounds/

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/gong $(DESTDIR)$(PREFIX)/lib/libgong.so $(DESTDIR)$(PREFIX)/include/gong.h
	rm -rf $(DESTDIR)$(PREFIX)/share/gong

# What a release ships, beside `make build`'s gong in its scratch directory: libgong.so with the
# Swift runtime linked in too, and argument-parser's generate-manual, which writes the man pages.
static-lib: build
	GONG_RELEASE_FOR_SIZE=1 $(SWIFT) build $(STATIC) --product GongABI
	GONG_RELEASE_FOR_SIZE=1 $(SWIFT) build $(STATIC) --product generate-manual

# The release files for this machine: out/dist/gong-VERSION-linux-ARCH.tar.gz and
# gong_VERSION_ARCH.deb, with lintian's verdict in out/dist/lintian.txt (packaging/dist.sh).
dist: static-lib
	@scripts/install-deps.sh dist
	packaging/dist.sh

# The release files installed and run where no Swift toolchain can be reached (scripts/dist-check.sh).
dist-check: dist
	scripts/dist-check.sh

# Regenerate the sound bank from its recipe (needs python3 with numpy, and flac).
sounds:
	python3 Sounds/make_sounds.py

# Every benchmark with its bar: the package-benchmark suite against its committed thresholds
# (ring, renderer, engine period, an hour's render: 0 allocations on the real-time path; exit 2
# on a regression, 4, taken as a pass, when only improvements were seen), render against klick,
# start-up at 44.1, 48 and 96 kHz, the real-time path through PulseAudio, and live CPU (10-minute
# sessions at two latencies) and start-up against aplay (about 30 minutes in all).
bench: bench-suite
	@scripts/install-deps.sh bench
	bench/render-vs-klick.sh
	bench/first-frame.py
	cd bench && $(SWIFT) run -c release gong-bench
	bench/live.py

bench-suite: deps
	cd bench && $(SWIFT) package benchmark thresholds check --no-progress || [ $$? -eq 4 ]

# The same suite's thresholds measured again and written to bench/Thresholds (commit them).
bench-thresholds: deps
	cd bench && $(SWIFT) package --allow-writing-to-package-directory benchmark thresholds update --no-progress

clean:
	rm -rf .build .build-examples .build-tsan out Sources/CGongBuild/build-commit.h
