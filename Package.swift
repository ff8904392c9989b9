// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "gong",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "gong", targets: ["gong"]),
        .library(name: "GongCore", targets: ["GongCore"]),
        .library(name: "GongAudio", targets: ["GongAudio"]),
        .library(name: "GongKit", targets: ["GongKit"]),
        .library(name: "GongPractice", targets: ["GongPractice"]),
        // The C interface (include/gong.h). `make lib` builds it and names it libgong.so: a
        // product cannot share the executable's name.
        .library(name: "GongABI", type: .dynamic, targets: ["GongABI"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // `gong remote`'s server: an event loop that sleeps in epoll_wait. NIOCore, NIOPosix,
        // NIOHTTP1 and NIOWebSocket import no Foundation.
        .package(url: "https://github.com/apple/swift-nio", "2.101.2"..<"2.102.0")
    ],
    targets: [
        // C libraries, reached through pkg-config. Debian/Ubuntu package names are the providers.
        .systemLibrary(name: "CAlsa", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile", providers: [.apt(["libsndfile1-dev"])]),
        // libpulse without pkg-config: its flags (-pthread, -D_REENTRANT) are ones SwiftPM refuses.
        .systemLibrary(name: "CPulse", providers: [.apt(["libpulse-dev"])]),
        .systemLibrary(name: "CSoxr", pkgConfig: "soxr", providers: [.apt(["libsoxr-dev"])]),
        .systemLibrary(name: "CPipeWire", pkgConfig: "libpipewire-0.3", providers: [.apt(["libpipewire-0.3-dev"])]),
        .systemLibrary(name: "CJack", pkgConfig: "jack", providers: [.apt(["libjack-jackd2-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The TOML parser of pattern and config files: toml++ (Debian's libtomlplusplus-dev, used
        // header-only, so nothing of it is needed at run time) behind a C interface, so that no
        // Swift module needs C++ interoperability.
        .target(
            name: "CGongTOML",
            cxxSettings: [.define("TOML_HEADER_ONLY", to: "1"), .define("TOML_EXCEPTIONS", to: "0")]),
        // gong's own small SQLite wrapper, for the history: no Foundation, no threads.
        .target(name: "GongSQLite", dependencies: ["CSQLite"]),
        // The callbacks sound servers call on their real-time threads, in C (they must never
        // allocate, lock or wait), and the frame ring they read from.
        .target(name: "CGongStreams", dependencies: ["CPipeWire", "CJack"]),
        // The commit gong was built from, handed in at build time (`gong --version`).
        .target(name: "CGongBuild"),
        // The wall-clock timer gong bells sleeps on between bells (timerfd).
        .target(name: "CGongTimer"),

        // Pure Swift: patterns, timeline, state machine, mixer, lock-free rings. No C, no clocks.
        .target(name: "GongCore"),
        // The edges: sound files, resampling, file output, ALSA, PulseAudio, PipeWire, JACK.
        .target(
            name: "GongAudio", dependencies: ["GongCore", "CAlsa", "CPulse", "CSndFile", "CSoxr", "CGongStreams"]),
        // The embedding facade: pattern files, sound bank lookup, sessions. What a program that
        // plays sessions links, libgong.so included, so it carries no database.
        .target(name: "GongKit", dependencies: ["GongCore", "GongAudio", "CGongBuild", "CGongTOML"]),
        // What gong keeps and serves around a session for the person using it: the history and
        // its stats (SQLite through GongSQLite), snapshots and the recorder that keeps both, the config
        // file, the control channel. Built on GongKit, never the other way round.
        .target(
            name: "GongPractice",
            dependencies: ["GongKit", "GongCore", "GongAudio", "CGongTimer", "GongSQLite"]),
        // `gong bench`: timing jitter measured on a live device, and gong against the players
        // people use instead, found in a recording of what was heard.
        .target(
            name: "GongBench",
            dependencies: [
                "GongKit", "GongAudio", "GongCore", .product(name: "Histogram", package: "hdrhistogram-swift")
            ]),
        // `gong remote`: the phone's page and the JSON API over HTTP and WebSocket, a client of
        // the control sockets and a reader of the history. A process of its own, so its faults
        // never reach a bell or a session.
        .target(
            name: "GongRemote",
            dependencies: [
                "GongKit", "GongPractice",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio")
            ]),
        // The C ABI over GongKit: opaque handles, statuses and JSON strings.
        .target(name: "GongABI", dependencies: ["GongKit"]),
        // The live terminal view: status lines, keys, signals. Depends on GongCore only so it is
        // testable without a device.
        .target(name: "GongTerminal", dependencies: ["GongCore"]),
        .executableTarget(
            name: "gong",
            dependencies: [
                "GongKit",
                "GongPractice",
                "GongBench",
                "GongTerminal",
                "GongRemote",
                .product(name: "ArgumentParser", package: "swift-argument-parser")
            ]),

        // A real device with faults injected on cue, for the engine's and the session's tests.
        .target(name: "GongTestSupport", dependencies: ["GongAudio", "GongCore"], path: "Tests/GongTestSupport"),
        // A JACK client of the live tests' own, recording what it hears onto the server's frame clock.
        .target(name: "CJackTap", dependencies: ["CJack"], path: "Tests/CJackTap"),
        // A PipeWire capture of a sink's monitor of the live tests' own, onto the graph's clock
        // (bench/tools/pw-tap.c builds the same recorder for bench/exactness.py).
        .target(name: "CPipeWireTap", dependencies: ["CPipeWire"], path: "Tests/CPipeWireTap"),
        // A PulseAudio recorder of a sink's monitor of the live tests' own, with the server's
        // account of when each of its frames was played.
        .target(name: "CPulseTap", dependencies: ["CPulse"], path: "Tests/CPulseTap"),
        .testTarget(name: "GongCoreTests", dependencies: ["GongCore"]),
        .testTarget(
            name: "GongAudioTests", dependencies: ["GongAudio", "GongCore", "GongTestSupport", "CGongStreams", "CPulse"]
        ),
        // GongPractice's tests live here too: the recorder's play sessions made by GongKit's tests.
        .testTarget(name: "GongKitTests", dependencies: ["GongKit", "GongPractice", "GongTestSupport"]),
        .testTarget(name: "GongBenchTests", dependencies: ["GongBench", "GongCore"]),
        .testTarget(name: "GongTerminalTests", dependencies: ["GongTerminal"]),
        .testTarget(
            name: "GongRemoteTests",
            dependencies: [
                "GongRemote", "GongPractice", "GongTestSupport", .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio")
            ]),
        .testTarget(name: "GongABITests", dependencies: ["GongABI", "GongKit", "GongTestSupport"]),
        .testTarget(
            name: "GongCLITests",
            dependencies: [
                "gong", "GongKit", "GongPractice", "GongTestSupport", "CJackTap", "CPipeWireTap", "CPulseTap"
            ])
    ],
    swiftLanguageModes: [.v6],
    cxxLanguageStandard: .cxx17
)

// Every module gong ships names what it imports, so no target reaches Foundation (and with it
// ICU's data) through another module's import: FoundationEssentials is what they may import.
// Not GongAudio: nothing it depends on imports Foundation, and its C libraries' headers each
// define the C library's own types (timespec), which Clang hands to whichever of them it reads
// first, differently in a debug and a release build.
let shipped: Set = ["GongCore", "GongSQLite", "GongKit", "GongPractice", "GongBench", "GongABI", "GongTerminal", "gong"]
for target in package.targets where shipped.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}

// The code a sound server's or a host's real-time thread runs (the mixer, the engines, the
// pulled render and its C interface) stays optimised for speed when a release is built for size
// (`make build` passes -Osize for the whole graph: the CLI, the remote's swift-nio, the history
// and argument-parser are most of gong's code and none of it is on the real-time path).
// Through the frontend because the frontend takes the last optimisation flag it is given and the
// driver hands it -Xfrontend's after its own; a target's plain -O would come before the
// command line's -Osize and lose. Only when the Makefile asks (GONG_RELEASE_FOR_SIZE): it is an
// unsafe flag, which SwiftPM refuses in a package that is depended on by URL.
if Context.environment["GONG_RELEASE_FOR_SIZE"] != nil {
    let realTime: Set = ["GongCore", "GongAudio", "GongKit", "GongABI"]
    for target in package.targets where realTime.contains(target.name) {
        target.swiftSettings =
            (target.swiftSettings ?? []) + [.unsafeFlags(["-Xfrontend", "-O"], .when(configuration: .release))]
    }
}

// A run that needs only some test targets names them in GONG_TEST_TARGETS (comma-separated), and
// the package then has no others: `make test`'s thread-sanitizer run builds its test product
// (`--product gongPackageTests`) with those targets and what they depend on, not the rest of the
// package instrumented for tests it never runs.
if let kept = Context.environment["GONG_TEST_TARGETS"] {
    let names = Set(kept.split(separator: ",").map(String.init))
    package.targets.removeAll { $0.type == .test && !names.contains($0.name) }
}
