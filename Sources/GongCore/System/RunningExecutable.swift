import Glibc

/// The file this process runs, as the kernel knows it (`/proc/self/exe`): not `argv[0]`, which
/// is a bare `gong` when found on `$PATH` and says nothing of where it lives. What a unit file
/// must name to start the same gong again, and how the tests find the gong built beside them.
public enum RunningExecutable {
    /// The absolute path; `argv[0]` where `/proc` cannot be read (the best left to name).
    public static func path() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        // readlink writes no terminating NUL: the buffer's zeros beyond what it wrote are one.
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        return count > 0 ? String(nulTerminated: buffer) : CommandLine.arguments[0]
    }
}
