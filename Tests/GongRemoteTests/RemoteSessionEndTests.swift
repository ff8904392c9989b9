import Glibc
import Testing

@testable import GongRemote

/// A session's control socket played by the test, one step at a time, so that replies come in
/// exactly the order a race would put them (fault injection: a real session's socket answers
/// the same lines, but when it pleases).
private final class StandInSession {
    let path: String
    private let listener: Int32

    init(directory: String, pid: Int32) throws {
        path = "\(directory)/\(pid).sock"
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() { bytes[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, listen(listener, 8) == 0 else { throw StandInError.cannotListen(errno) }
    }

    enum StandInError: Error { case cannotListen(Int32), noConnection }

    deinit {
        unlink(path)
        close(listener)
    }

    /// The remote's next connection, within ten seconds.
    func accept() throws -> Line {
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 10_000) == 1 else { throw StandInError.noConnection }
        let descriptor = Glibc.accept(listener, nil, nil)
        guard descriptor >= 0 else { throw StandInError.noConnection }
        var interval = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        return Line(descriptor: descriptor)
    }

    func hasWaitingConnection() -> Bool {
        var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        return poll(&ready, 1, 0) == 1
    }

    /// One connection, a JSON line at a time.
    struct Line {
        let descriptor: Int32

        /// The next line the remote sent, or nil when it closed (or sent nothing in ten seconds).
        func read() -> String? {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while recv(descriptor, &byte, 1, 0) == 1 {
                if byte == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
                bytes.append(byte)
            }
            return nil
        }

        func write(_ line: String) {
            let bytes = Array((line + "\n").utf8)
            _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        func close() { Glibc.close(descriptor) }
    }

    static func status(id: String?, state: String) -> String {
        let tag = id.map { #""id":"\#($0)","# } ?? ""
        return #"{"schema":1,"type":"reply",\#(tag)"ok":true,"status":{"pattern":"box","state":"\#(state)"}}"#
    }
}

@Suite("gong remote and a session's end", .serialized)
struct RemoteSessionEndTests {
    /// A session's socket still answers `status` after its events have ended, until its process
    /// exits. The status the remote asks for on the session's last event may so come back after
    /// the subscription has closed and the phones were told `ended`: it must not reach them, or
    /// the page shows a finished sit as running for good (the browser test's "the sit ends").
    /// The history changed is told once the socket is gone, not at `ended`.
    @Test func endedIsTheLastThePhonesHearOfASession() throws {
        let world = RemoteWorld()
        let server = try world.server()
        defer { server.close() }
        let phone = try Phone(port: server.port, store: world.store)
        let feed = try phone.socket()
        defer { feed.close() }
        // A live process that is not this one: the remote checks that a socket's process lives.
        let pid = getppid()
        let session = try StandInSession(directory: world.control, pid: pid)

        let probe = try session.accept()
        #expect(probe.read()?.contains(#""command":"status""#) == true)
        probe.write(StandInSession.status(id: "probe", state: "active"))
        let subscription = try session.accept()
        #expect(subscription.read()?.contains(#""command":"subscribe""#) == true)
        subscription.write(#"{"schema":1,"type":"reply","id":"remote","ok":true}"#)
        let first = try session.accept()
        #expect(first.read()?.contains(#""command":"status""#) == true)
        first.write(StandInSession.status(id: nil, state: "active"))
        #expect(message(on: feed, containing: [#""type":"session""#, #""state":"active""#]) != nil)

        // The last event; the status it asks for is answered only after the events have ended.
        subscription.write(#"{"schema":1,"type":"sessionEnded","playedSeconds":9}"#)
        let last = try session.accept()
        #expect(last.read()?.contains(#""command":"status""#) == true)
        subscription.close()
        #expect(message(on: feed, containing: [#""type":"ended""#, #""pid":\#(pid)"#]) != nil)
        last.write(StandInSession.status(id: nil, state: "completed"))
        // The remote closes a status connection once it has taken in the reply.
        #expect(last.read() == nil)
        last.close()
        probe.close()
        first.close()

        // Whatever the remote made of that reply is on the feed before the answer to a clock
        // probe sent now.
        feed.send(frame(opcode: 1, payload: Array(#"{"type":"time","clientMs":1}"#.utf8)))
        var after: [String] = []
        while let frame = readFrame(feed) {
            let text = String(decoding: frame.payload, as: UTF8.self)
            if text.contains(#""type":"time""#) { break }
            after.append(text)
        }
        #expect(!after.contains { $0.contains(#""type":"session""#) }, "told after ended: \(after)")
        // Its process has still to write the history: the phones are not told yet.
        #expect(!after.contains { $0.contains(#""type":"history""#) }, "history told too soon: \(after)")

        // Nor is it taken up again while its socket is still there: any change in the directory
        // has the remote ask every socket it does not follow what it is.
        mkdir(world.control + "/a-change", 0o700)
        let again = try session.accept()
        #expect(again.read()?.contains(#""command":"status""#) == true)
        again.write(StandInSession.status(id: "probe", state: "completed"))
        #expect(again.read() == nil)
        again.close()
        // A request taken in after the reply: a subscription would have connected by then.
        #expect(try phone.get("/api/session")?.body.hasPrefix(#"{"sessions":[]"#) == true)
        #expect(!session.hasWaitingConnection(), "the ended session was subscribed to again")

        // The process removes its socket after its last write to the history: now the phones
        // are told to read it again, and the page shows the finished sit without a reload.
        unlink(session.path)
        #expect(message(on: feed, containing: [#""type":"history""#, #""pid":\#(pid)"#]) != nil)
    }
}
