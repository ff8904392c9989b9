import Foundation
import Glibc
import GongTestSupport
import Testing

@testable import GongRemote

/// A real server on loopback, its state in a directory of its own, with short limits so a
/// slow client is dropped within the test.
final class RemoteFixture {
    let directory: String
    let store: RemoteStore
    let server: RemoteServer
    var port: Int { server.port }

    init(requestSeconds: Double = 10, pingSeconds: Double = 25, lockSeconds: Int64 = 900) throws {
        var template = Array("/tmp/gong-remote-test-XXXXXX".utf8CString)
        directory = String(cString: mkdtemp(&template))
        store = RemoteStore(directory: directory + "/state")
        mkdir(directory + "/control", 0o700)
        var configuration = RemoteConfiguration(
            store: store, controlDirectory: directory + "/control", gongExecutable: "/bin/false")
        configuration.port = 0
        configuration.limits.requestSeconds = requestSeconds
        configuration.limits.pingSeconds = pingSeconds
        configuration.limits.pairingLockSeconds = lockSeconds
        server = try RemoteServer(configuration: configuration)
    }

    deinit {
        server.close()
        _ = try? RemoteStore(directory: directory).devices()
        let remove = "rm -rf '\(directory)'"
        _ = remove.withCString { system($0) }
    }

    var origin: String { "Origin: http://127.0.0.1:\(port)" }

    /// A device paired through the API; its token, sent back as the cookie.
    func pair(name: String = "test phone", role: RemoteRole = .control) throws -> String {
        let code = try store.newPairingCode(role: role, now: Int64(time(nil)))
        let reply = try exchange(
            "POST", "/api/pair", port: port, headers: [origin, "Content-Type: application/json"],
            body: #"{"code":"\#(code)","name":"\#(name)"}"#)
        let cookie = reply?.header("Set-Cookie") ?? ""
        guard reply?.status == 200, let start = cookie.range(of: "gong_token="), let end = cookie.firstIndex(of: ";")
        else { throw PairingFailed(reply: reply?.body ?? "no reply") }
        return String(cookie[start.upperBound..<end])
    }

    struct PairingFailed: Error { var reply: String }

    /// A WebSocket upgrade sent with `headers`; the client and the status line's code.
    func upgrade(headers: [String]) throws -> (RawClient, Int?) {
        let client = try RawClient(port: port)
        return (client, client.upgradeToWebSocket(port: port, headers: headers)?.status)
    }

    /// True while the server answers a plain request: what "a second client served" means.
    func serves() -> Bool { (try? exchange("GET", "/", port: port))??.status == 200 }
}

/// On threads of its own (`.onThreadsOfItsOwn`): its clients mostly wait on the remote's
/// answers, which on the shared threads held one of a 2-core machine's two.
@Suite("gong remote's security", .serialized, .onThreadsOfItsOwn)
struct RemoteSecurityTests {
    @Test func sha256MatchesTheStandardsVectors() {
        #expect(SHA256.hex("abc".utf8) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        let long = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
        #expect(SHA256.hex(long.utf8) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func aRequestWithoutATokenIsRefused401() throws {
        let fixture = try RemoteFixture()
        let reply = try exchange("GET", "/api/session", port: fixture.port)
        #expect(reply?.status == 401)
        #expect(reply?.body.contains("gong remote pair") == true)
        // The page itself carries no data and is served to anyone who may reach the box.
        #expect(fixture.serves())
    }

    @Test func aRequestForAnotherHostIsRefusedEvenWithAToken() throws {
        let fixture = try RemoteFixture()
        let token = try fixture.pair()
        let good = try exchange("GET", "/api/device", port: fixture.port, headers: ["Cookie: gong_token=\(token)"])
        #expect(good?.status == 200)
        #expect(good?.body.contains("test phone") == true)
        for host in ["rebind.attacker.example", "rebind.attacker.example:\(fixture.port)", ""] {
            let reply = try exchange(
                "GET", "/api/device", port: fixture.port, host: host, headers: ["Cookie: gong_token=\(token)"])
            #expect(reply?.status == 421, "Host \(host)")
        }
        #expect(try exchange("GET", "/", port: fixture.port, host: "evil.example")?.status == 421)
    }

    @Test func pairingSetsAnHttpOnlyStrictCookieAndTheCodeWorksOnce() throws {
        let fixture = try RemoteFixture()
        let code = try fixture.store.newPairingCode(role: .view, now: Int64(time(nil)))
        let body = #"{"code":"\#(code)","name":"Anna's phone"}"#
        let reply = try exchange("POST", "/api/pair", port: fixture.port, headers: [fixture.origin], body: body)
        #expect(reply?.status == 200)
        let cookie = reply?.header("Set-Cookie") ?? ""
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        // The token is kept hashed: the file never holds it.
        let token = String(cookie.dropFirst("gong_token=".count).prefix { $0 != ";" })
        let devices = try fixture.store.devices()
        #expect(devices.map(\.name) == ["Anna's phone"] && devices[0].role == .view)
        #expect(devices[0].tokenHash == SHA256.hex(token.utf8))
        var info = stat()
        stat(fixture.store.devicesPath, &info)
        #expect(info.st_mode & 0o777 == 0o600)
        let again = try exchange("POST", "/api/pair", port: fixture.port, headers: [fixture.origin], body: body)
        #expect(again?.status == 403)
        #expect(again?.body.contains("noCode") == true)
        // A view device reads but cannot control.
        let control = try exchange(
            "POST", "/api/bells/ring", port: fixture.port, headers: [fixture.origin, "Cookie: gong_token=\(token)"])
        #expect(control?.status == 403)
        #expect(control?.body.contains("viewOnly") == true)
        // Scripts pair for a bearer token instead of a cookie.
        let scriptCode = try fixture.store.newPairingCode(role: .control, now: Int64(time(nil)))
        let script = try exchange(
            "POST", "/api/pair", port: fixture.port, body: #"{"code":"\#(scriptCode)","name":"ha","bearer":true}"#)
        #expect(script?.status == 200 && script?.header("Set-Cookie") == nil)
        struct Token: Decodable { var token: String }
        let bearer = try JSONDecoder().decode(Token.self, from: Data((script?.body ?? "").utf8)).token
        let status = try exchange("GET", "/api/bells", port: fixture.port, headers: ["Authorization: Bearer \(bearer)"])
        #expect(status?.status == 200)
    }

    @Test func anExpiredCodeIsRefused() throws {
        let fixture = try RemoteFixture()
        let code = try fixture.store.newPairingCode(
            role: .control, now: Int64(time(nil)) - RemoteStore.codeLifetimeSeconds - 1)
        let reply = try exchange(
            "POST", "/api/pair", port: fixture.port, headers: [fixture.origin], body: #"{"code":"\#(code)"}"#)
        #expect(reply?.status == 403)
        #expect((reply?.body ?? "").contains("codeExpired"))
        #expect(try fixture.store.devices().isEmpty)
    }

    @Test func tenWrongCodesLockPairingEvenForTheRightOne() throws {
        let fixture = try RemoteFixture()
        let code = try fixture.store.newPairingCode(role: .control, now: Int64(time(nil)))
        let wrong = code == "00000000" ? "11111111" : "00000000"
        for attempt in 1...10 {
            let reply = try exchange(
                "POST", "/api/pair", port: fixture.port, headers: [fixture.origin], body: #"{"code":"\#(wrong)"}"#)
            #expect(reply?.status == 403, "attempt \(attempt)")
        }
        let right = try exchange(
            "POST", "/api/pair", port: fixture.port, headers: [fixture.origin], body: #"{"code":"\#(code)"}"#)
        #expect(right?.status == 429)
        #expect(right?.body.contains("pairingLocked") == true)
        #expect(try fixture.store.devices().isEmpty)
    }

    @Test func aCrossOriginPostOrWebSocketIsRefused() throws {
        let fixture = try RemoteFixture()
        let token = try fixture.pair()
        let cookie = "Cookie: gong_token=\(token)"
        let post = try exchange(
            "POST", "/api/bells/ring", port: fixture.port, headers: ["Origin: http://evil.example", cookie])
        #expect(post?.status == 403)
        #expect(post?.body.contains("crossOrigin") == true)
        // A POST with the cookie and no Origin is no page of ours either.
        let bare = try exchange("POST", "/api/bells/ring", port: fixture.port, headers: [cookie])
        #expect(bare?.status == 403)
        let (crossSite, crossStatus) = try fixture.upgrade(headers: ["Origin: http://evil.example", cookie])
        crossSite.close()
        #expect(crossStatus == 403)
        let (sameSite, sameStatus) = try fixture.upgrade(headers: [fixture.origin, cookie])
        defer { sameSite.close() }
        #expect(sameStatus == 101)
        let hello = readFrame(sameSite)
        #expect(hello?.opcode == 1)
        let helloText = String(decoding: hello?.payload ?? [], as: UTF8.self)
        #expect(helloText.contains(#""type":"hello""#))
        // And without a token, no socket.
        let (anonymous, anonymousStatus) = try fixture.upgrade(headers: [fixture.origin])
        anonymous.close()
        #expect(anonymousStatus == 401)
    }

    @Test func aRevokedTokenIsRefusedAndItsSocketClosedAtOnce() throws {
        let fixture = try RemoteFixture()
        let token = try fixture.pair(name: "lost phone")
        let other = try fixture.pair(name: "kept phone")
        let (lost, lostStatus) = try fixture.upgrade(headers: [fixture.origin, "Cookie: gong_token=\(token)"])
        let (kept, keptStatus) = try fixture.upgrade(headers: [fixture.origin, "Cookie: gong_token=\(other)"])
        defer {
            lost.close()
            kept.close()
        }
        #expect(lostStatus == 101 && keptStatus == 101)
        #expect(readFrame(lost)?.opcode == 1)
        #expect(readFrame(kept)?.opcode == 1)
        let start = RemoteHub.nowMs()
        #expect(try fixture.store.revoke("lost phone").count == 1)
        // The close frame (policy violation, 1008), then the end of the connection.
        let closing = readFrame(lost)
        let waited = RemoteHub.nowMs() - start
        #expect(closing?.opcode == 8)
        #expect(closing.map { Int($0.payload[0]) << 8 | Int($0.payload[1]) } == 1008)
        #expect(lost.closedByServer())
        #expect(waited < 2000, "closed after \(waited) ms")
        let refused = try exchange("GET", "/api/device", port: fixture.port, headers: ["Cookie: gong_token=\(token)"])
        #expect(refused?.status == 401)
        // The other phone stays connected and answered.
        kept.send(frame(opcode: 1, payload: Array(#"{"type":"time","clientMs":5}"#.utf8)))
        let time = readFrame(kept)
        let timeText = String(decoding: time?.payload ?? [], as: UTF8.self)
        #expect(timeText.contains(#""clientMs":5"#))
    }

    @Test func anOversizedRequestIsRefused413AndOthersAreServed() throws {
        let fixture = try RemoteFixture()
        let client = try RawClient(port: fixture.port)
        defer { client.close() }
        let huge = String(repeating: "a", count: 64 * 1024)
        client.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: \(huge)\r\n\r\n")
        #expect(client.response()?.status == 413)
        #expect(client.closedByServer())
        let body = String(repeating: "b", count: 40 * 1024)
        let post = try exchange("POST", "/api/pair", port: fixture.port, headers: [fixture.origin], body: body)
        #expect(post?.status == 413)
        #expect(fixture.serves())
    }

    @Test func aSlowlorisClientIsDroppedWhileAnotherIsServed() throws {
        let fixture = try RemoteFixture(requestSeconds: 1)
        let slow = try RawClient(port: fixture.port, timeout: 10)
        defer { slow.close() }
        let start = RemoteHub.nowMs()
        var served = 0
        // A byte every 100 ms: the request never completes; the server gives up after a second.
        // (The pause is the attack under test: a client that trickles, not a wait for anything.)
        for byte in Array("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8) + Array(repeating: 120, count: 200) {
            guard slow.send([byte]) else { break }
            if fixture.serves() { served += 1 }
            usleep(100_000)
            if RemoteHub.nowMs() - start > 5000 { break }
        }
        let reply = slow.response()
        let elapsed = RemoteHub.nowMs() - start
        #expect(reply == nil || reply?.status == 408)
        #expect(slow.closedByServer())
        #expect(elapsed < 4000, "dropped after \(elapsed) ms")
        #expect(served >= 5)
        // A silent client (connects, says nothing) is dropped the same way.
        let silent = try RawClient(port: fixture.port, timeout: 5)
        defer { silent.close() }
        #expect(silent.response()?.status == 408)
    }

    /// Generated malformed requests, each on its own connection, and a second client served
    /// throughout. GONG_REMOTE_FUZZ sets the count (10 000 in a long run); the seed repeats it.
    @Test func malformedRequestsNeverCrashTheServer() throws {
        let fixture = try RemoteFixture(requestSeconds: 1)
        let token = try fixture.pair()
        let count = Int(getenv("GONG_REMOTE_FUZZ").map { String(cString: $0) } ?? "") ?? 1000
        var generator = SeededGenerator(state: 0x6f6e_6721)
        let valid = Array(
            request(
                "POST", "/api/session/gain", port: fixture.port,
                headers: [fixture.origin, "Cookie: gong_token=\(token)"], body: #"{"decibels":-6}"#
            ).utf8)
        var answered = 0
        for index in 0..<count {
            var bytes: [UInt8]
            switch Int.random(in: 0..<4, using: &generator) {
            case 0:
                bytes = (0..<Int.random(in: 1..<600, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            case 1:
                bytes = valid
                for _ in 0..<Int.random(in: 1..<8, using: &generator) {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(
                        in: 0...255, using: &generator)
                }
            case 2:
                bytes = Array(valid.prefix(Int.random(in: 0..<valid.count, using: &generator))) + [13, 10, 13, 10]
            default:
                let pieces = [
                    "GET", "POST", "/", "/api/", "/ws", " ", "HTTP/1.1", "HTTP/9", "\r\n", ":", "Host",
                    "Content-Length: 99999999", "Transfer-Encoding: chunked", "0\r\n", "%", "\u{0}",
                    "Cookie: gong_token="
                ]
                bytes = Array(
                    (0..<Int.random(in: 1..<30, using: &generator)).map { _ in pieces.randomElement(using: &generator)!
                    }
                    .joined().utf8)
            }
            let client = try RawClient(port: fixture.port, timeout: 3)
            client.send(bytes + [13, 10, 13, 10])
            if client.response() != nil { answered += 1 }
            client.close()
            if index % 100 == 0 { #expect(fixture.serves(), "after \(index) requests") }
        }
        #expect(fixture.serves())
        #expect(answered > 0)
    }

    @Test func malformedWebSocketFramesNeverCrashTheServer() throws {
        let fixture = try RemoteFixture(requestSeconds: 1)
        let token = try fixture.pair()
        let count = Int(getenv("GONG_REMOTE_FUZZ").map { String(cString: $0) } ?? "") ?? 1000
        var generator = SeededGenerator(state: 0x7773_2121)
        var socket: RawClient?
        var opened = 0
        for index in 0..<count {
            if socket == nil {
                let (client, status) = try fixture.upgrade(headers: [fixture.origin, "Cookie: gong_token=\(token)"])
                #expect(status == 101)
                _ = readFrame(client)
                socket = client
                opened += 1
            }
            guard let client = socket else { continue }
            var bytes: [UInt8]
            switch Int.random(in: 0..<3, using: &generator) {
            case 0:
                bytes = (0..<Int.random(in: 1..<64, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
            case 1:
                let opcode = UInt8.random(in: 0...15, using: &generator)
                let payload = (0..<Int.random(in: 0..<300, using: &generator)).map { _ in
                    UInt8.random(in: 0...255, using: &generator)
                }
                bytes = frame(
                    opcode: opcode, payload: payload, fin: Bool.random(using: &generator),
                    mask: Bool.random(using: &generator) ? [9, 8, 7, 6] : nil)
            default:
                // Claims more than the frame limit.
                bytes = frame(opcode: 1, payload: Array(repeating: 65, count: 20_000))
            }
            if !client.send(bytes) || index % 3 == 0 {
                client.close()
                socket = nil
            }
            if index % 100 == 0 { #expect(fixture.serves(), "after \(index) frames") }
        }
        socket?.close()
        #expect(fixture.serves())
        #expect(opened > 1)
    }
}
