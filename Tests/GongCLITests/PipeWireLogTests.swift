import Foundation
import Testing

/// `PipeWireLog` reads the lines PipeWire 0.3.65 writes (copied from a rig's log) and no others.
struct PipeWireLogTests {
    @Test func theDaemonsAndTheClientsLinesAreRead() throws {
        let daemon = try #require(
            PipeWireLog.lateClient(
                in: "[I][44246.624734] pw.node      | [     impl-node.c: 1058 dump_states()] (gong-69) client too slow!"
                    + " rate:256/48000 pos:1028864 status:triggered"))
        #expect(daemon.node == "gong" && daemon.seconds == 44246.624734)
        #expect(daemon.what == "too slow! rate:256/48000 pos:1028864 status:triggered" && daemon.cycles == 1)
        let client = try #require(
            PipeWireLog.lateClient(
                in: "[I][44246.638701] pw.node      | [     impl-node.c: 1203 node_on_fd_events()] (gong-test-keeper-0)"
                    + " client missed 3 wakeups"))
        #expect(client.node == "gong-test-keeper" && client.what == "missed 3 wakeups" && client.cycles == 3)
    }

    @Test func otherLinesAreNot() {
        for line in [
            "[I][44261.483729] pw.node      | [     impl-node.c:  409 node_update_state()] (parec-53) running -> suspended",
            "[W][44261.483729] pw.node      | [     impl-node.c: 1058 dump_states()] (gong-69) client too slow! rate:256/48000",
            "dbus-daemon[13293]: [session uid=0 pid=13293] org.freedesktop.DBus.Error.AccessDenied",
            "[I][44246.638701] pw.node      | [     impl-node.c: 1203 node_on_fd_events()] (gong-0) client missed wakeups soon"
        ] {
            #expect(PipeWireLog.lateClient(in: line) == nil, "\(line)")
        }
    }
}
