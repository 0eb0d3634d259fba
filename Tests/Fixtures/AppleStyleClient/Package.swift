// swift-tools-version: 6.0
// SPDX-License-Identifier: Apache-2.0
//
// A client of netpath as a developer porting an Apple app would write one: the path monitoring
// code of Sources/AppleStyleClient is written as Apple's documentation and the usual tutorials
// write it, unchanged, and builds against the `Network` product on Linux (on Apple platforms the
// condition leaves it out and `import Network` is Apple's framework). NetworkTests builds this
// package and runs it in a network namespace (Tests/NetworkTests/AppleStyleClientTests.swift).
import PackageDescription

let package = Package(
    name: "AppleStyleClient",
    platforms: [.macOS(.v14), .iOS(.v17)],
    // `name:` keeps the product references independent of the directory the repository is cloned into.
    dependencies: [.package(name: "netpath", path: "../../..")],
    targets: [
        // Swift 5 mode, as most app code is written today…
        .executableTarget(
            name: "AppleStyleClient",
            dependencies: [
                .product(name: "Network", package: "netpath", condition: .when(platforms: [.linux]))
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        ),
        // …and the same files (a symbolic link to that directory) in Swift 6 mode.
        .executableTarget(
            name: "AppleStyleClientSwift6",
            dependencies: [
                .product(name: "Network", package: "netpath", condition: .when(platforms: [.linux]))
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // NetPath's richer API from outside the package: custom classification with nothing but
        // the NetPath product.
        .executableTarget(
            name: "CustomClassification",
            dependencies: [.product(name: "NetPath", package: "netpath")]
        ),
    ]
)
