// swift-tools-version:6.0
// A program embedding gong: depends on the package by path and uses GongKit alone.
import PackageDescription

let package = Package(
    name: "gong-example",
    dependencies: [.package(name: "gong", path: "../..")],
    targets: [
        .executableTarget(name: "play", dependencies: [.product(name: "GongKit", package: "gong")])
    ],
    swiftLanguageModes: [.v6]
)
