// swift-tools-version:6.1
// Benchmarks for gong: see README.md here. `make bench` runs them all.
import PackageDescription

let package = Package(
    name: "gong-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "gong", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1")
    ],
    targets: [
        // The real-time path as package-benchmark measures it, against committed thresholds
        // (Thresholds/): `swift package benchmark thresholds check` fails on a regression.
        .executableTarget(
            name: "GongBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "GongCore", package: "gong"),
                .product(name: "GongAudio", package: "gong"),
                .product(name: "GongKit", package: "gong")
            ],
            path: "Benchmarks/GongBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]),
        // Render time per period with 32 voices and every malloc on the audio thread, through
        // PulseAudio too (libpulse's allocations, reported): `swift run -c release gong-bench`.
        .executableTarget(
            name: "gong-bench",
            dependencies: [
                .product(name: "GongCore", package: "gong"),
                .product(name: "GongAudio", package: "gong"),
                .product(name: "MallocInterposerSwift", package: "malloc-interposer")
            ])
    ],
    swiftLanguageModes: [.v6]
)
