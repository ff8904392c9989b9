import GongCore
import Testing

@Suite struct RunningExecutableTests {
    /// The test binary's own file, absolute, whatever the directory it was started from.
    @Test func isTheAbsolutePathOfTheFileThisProcessRuns() {
        let path = RunningExecutable.path()
        #expect(path.hasPrefix("/") && path.hasSuffix("/gongPackageTests.xctest"), "\(path)")
    }
}
