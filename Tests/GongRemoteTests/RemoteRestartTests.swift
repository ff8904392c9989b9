import Glibc
import Testing

@testable import GongRemote

@Suite("gong remote started again")
struct RemoteRestartTests {
    /// A process the remote starts (a sit, `gong history add`) outlives it and must not keep its
    /// listening socket, or a remote started again could not listen on its port while the sit
    /// plays on (swift-nio's sockets are not close-on-exec).
    @Test func aProcessTheRemoteStartedDoesNotKeepItsPort() throws {
        let world = RemoteWorld()
        let first = try world.server()
        let port = first.port
        let child: Int32
        switch RemoteHub.spawnDetached("/bin/sleep", ["60"], environment: [:]) {
        case .success(let pid): child = pid
        case .failure(let error): throw error
        }
        defer {
            kill(child, SIGKILL)
            var status: Int32 = 0
            waitpid(child, &status, 0)
        }
        first.close()
        #expect(kill(child, 0) == 0, "the child still runs")
        let again = try world.server(port: port)
        #expect(again.port == port)
        let phone = try Phone(port: port, store: world.store)
        #expect(try phone.get("/api/device")?.status == 200, "the remote started again answers on its port")
        again.close()
    }
}
