// swift-tools-version:6.0
// Benchmarks for gong, measured against baselines in the same run: see README.md here.
import PackageDescription

let package = Package(
    name: "gong-bench",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "gong", path: ".."),
        .package(url: "https://github.com/ordo-one/malloc-interposer", from: "1.6.1")
    ],
    targets: [
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
