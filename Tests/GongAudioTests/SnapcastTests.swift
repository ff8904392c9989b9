import Foundation
import Glibc
import GongCore
import GongTestSupport
import Testing

@testable import GongAudio

/// The Snapcast route without a snapserver: its names, the control's reply, and the device fed
/// into a FIFO the test reads, with a control port of the test's own that answers as 0.26 does.
@Suite struct SnapcastTests {
    @Test func aSnapcastNameLeadsToItsSourceAndControl() throws {
        let fifo = SnapcastAddress("/tmp/snapfifo")
        #expect(OutputRoute(device: "snapcast:/tmp/snapfifo") == .snapcast(try #require(fifo)))
        #expect(fifo?.source == .fifo(path: "/tmp/snapfifo"))
        #expect(fifo?.controlHost == "127.0.0.1" && fifo?.controlPort == 1705 && fifo?.bufferMs == 1000)
        let tcp = SnapcastAddress("tcp://house.local:4953?control=10.0.0.2:1780&buffer=400")
        #expect(tcp?.source == .tcp(host: "house.local", port: 4953))
        #expect(tcp?.controlHost == "10.0.0.2" && tcp?.controlPort == 1780 && tcp?.bufferMs == 400)
        #expect(SnapcastAddress("tcp://pi:4953")?.controlHost == "pi")
        for bad in ["", "tcp://pi", "tcp://pi:0", "http://x:1", "/f?control=x", "/f?buffer=0", "/f?volume=3"] {
            #expect(SnapcastAddress(bad) == nil, "\(bad)")
        }
        #expect(OutputRoute(device: "snapcast:tcp://pi") == .snapcastUnreadable("tcp://pi"))
    }

    @Test func theStatusNamesTheStreamsAndTheRoomsThatPlayThem() throws {
        let status = try #require(SnapcastStatus(reply: Data(Self.reply(fifo: "/run/gong.fifo").utf8)))
        let address = try #require(SnapcastAddress("/run/gong.fifo"))
        let stream = try #require(status.stream(fedBy: address))
        #expect(stream.id == "gong" && stream.sampleFormat == "48000:16:2" && stream.scheme == "pipe")
        #expect(status.stream(fedBy: try #require(SnapcastAddress("/other"))) == nil)
        #expect(status.stream(fedBy: try #require(SnapcastAddress("tcp://127.0.0.1:4953")))?.id == "radio")
        #expect(
            status.rooms == [
                .init(id: "room-a", name: "kitchen", streamID: "gong", connected: true, latencyMs: 0),
                .init(id: "room-b", name: "vm", streamID: "gong", connected: false, latencyMs: 40)
            ])
        #expect(SnapcastStatus(reply: Data("{\"id\":1,\"error\":{}}".utf8)) == nil)
    }

    @Test func noControlAnsweringIsNoServer() throws {
        let port = try FakeControl.unusedPort()
        let address = try #require(SnapcastAddress("/x?control=127.0.0.1:\(port)"))
        let error = #expect(throws: AudioDeviceError.self) {
            try SnapcastPCM(PCMRequest(device: "snapcast:/x"), address: address)
        }
        #expect(error?.reason == .noServer && error?.system == .snapcast && error?.errno == ECONNREFUSED)
    }

    /// The frames arrive exact and in order however the pipe takes them, the writes are paced to
    /// the buffer, a frame is heard the server's buffer after the model hands it on, and the
    /// reader gone is a lost device.
    @Test func aFIFOGetsEveryFramePacedAndItsReaderGoneIsALostDevice() throws {
        let directory = try FakeControl.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/fifo"
        #expect(mkfifo(path, 0o600) == 0)
        let control = try FakeControl(reply: Self.reply(fifo: path, status: "idle"))
        // Close-on-exec: a process another test starts meanwhile must not hold the FIFO's read
        // end open, or the reader never goes. Closed once, below or on the way out.
        var reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        defer { if reader >= 0 { close(reader) } }
        let device = try SnapcastPCM(
            PCMRequest(device: "snapcast:" + path, latencyMs: 100),
            address: try #require(SnapcastAddress("\(path)?control=127.0.0.1:\(control.port)&buffer=700")))
        let leadIn = Int(SnapcastPCM.leadInSeconds * 48000)
        let configuration = device.configuration
        #expect(configuration.format == .int16 && configuration.rate == 48000 && configuration.bufferFrames == 4800)
        // The buffer asked, and a FLAC block (the stream names no codec: flac, at level 2).
        #expect(configuration.heardAfterNanoseconds == 724_000_000)
        #expect(device.rooms.map(\.id) == ["room-a", "room-b"] && device.streamID == "gong")

        // Sample n of channel c is n * 2 + c: any frame lost, repeated or split wrongly shows.
        let frames = 48000
        var samples = [Int16](repeating: 0, count: frames * 2)
        for index in samples.indices { samples[index] = Int16(truncatingIfNeeded: index) }
        var received = [Int16]()
        var buffer = [Int16](repeating: 0, count: 8192)
        let started = MonotonicTime.now()
        var offset = 0
        var maximumAhead: Int64 = 0
        while offset < frames {
            let result = device.wait(timeoutMs: 200)
            #expect(result >= 0)
            if result == 1 {
                // Odd sizes, so the pipe is handed part frames too.
                let written = samples.withUnsafeBytes {
                    device.writeInterleaved($0.baseAddress! + offset * 4, frames: min(frames - offset, 1237))
                }
                #expect(written >= 0 || written == Int(-EAGAIN))
                offset += max(0, written)
            }
            // The session's frames are due after the lead-in's, all written before the first of them.
            let due = FrameTime.frames(
                inNanoseconds: MonotonicTime.now().nanoseconds - started.nanoseconds, rate: 48000)
            if offset > 0 { maximumAhead = max(maximumAhead, Int64(leadIn + offset) - due) }
            let count = read(reader, &buffer, buffer.count * 2)
            if count > 0 { received += buffer[0..<(count / 2)] }
        }
        let elapsed = MonotonicTime.now().seconds - started.seconds
        // The lead-in and a second of frames with a 100 ms buffer: written over about 1.9 s,
        // never more than the buffer and a write ahead of the clock.
        #expect(elapsed > 1.85 && elapsed < 2.5, "\(elapsed)")
        #expect(maximumAhead <= 4800 + 1237, "\(maximumAhead)")
        let status = try #require(device.status())
        #expect(status.state == .running && status.delayFrames <= 4800)
        while received.count < samples.count {
            let count = read(reader, &buffer, buffer.count * 2)
            guard count > 0 else { break }
            received += buffer[0..<(count / 2)]
        }
        #expect(received.count == leadIn * 2 + samples.count)
        #expect(received.prefix(leadIn * 2).allSatisfy { $0 == 0 })
        #expect(Array(received.dropFirst(leadIn * 2)) == samples)

        close(reader)
        reader = -1
        var lost: Int32 = 0
        _ = Waiting.until {
            let written = samples.withUnsafeBytes { device.writeInterleaved($0.baseAddress!, frames: 480) }
            if written < 0 && written != Int(-EAGAIN) && written != Int(-EPIPE) { lost = Int32(written) }
            _ = device.wait(timeoutMs: 20)
            return lost != 0
        }
        #expect(lost == -ENODEV)
        device.close()
    }

    /// An idle stream gets a second of silence ahead of the session's first frame, paced like
    /// the rest, and the status counts it as still to be heard.
    @Test func anIdleStreamGetsASecondOfSilenceFirst() throws {
        let directory = try FakeControl.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/fifo"
        #expect(mkfifo(path, 0o600) == 0)
        let control = try FakeControl(reply: Self.reply(fifo: path, status: "idle"))
        let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        defer { close(reader) }
        let device = try SnapcastPCM(
            PCMRequest(device: "snapcast:" + path, latencyMs: 100),
            address: try #require(SnapcastAddress("\(path)?control=127.0.0.1:\(control.port)")))
        defer { device.close() }
        let started = MonotonicTime.now()
        var drained = 0
        var buffer = [UInt8](repeating: 0, count: 65536)
        var result: Int32 = 0
        while result != 1 {
            result = device.wait(timeoutMs: 200)
            #expect(result >= 0)
            let count = read(reader, &buffer, buffer.count)
            if count > 0 {
                #expect(buffer[0..<count].allSatisfy { $0 == 0 })
                drained += count
            }
        }
        let waited = MonotonicTime.now().seconds - started.seconds
        // 48000 frames of silence; ready once no more than the buffer (100 ms) of it is left.
        #expect(waited > 0.85 && waited < 1.3, "\(waited)")
        // The test's reader took the silence as fast as it came, on no schedule: the status places
        // the stream by the fastest it was read, so it counts no more than the buffer's worth the
        // model keeps ahead (none, as here, when everything was read as soon as written).
        let status = try #require(device.status())
        #expect(drained > 0 && status.delayFrames >= 0 && status.delayFrames <= 4800, "\(status.delayFrames)")
        let one: [Int16] = [1, 1]
        #expect(one.withUnsafeBytes { device.writeInterleaved($0.baseAddress!, frames: 1) } == 1)
    }

    /// A source takes one writer: a stream that is playing is waited for while it may still be
    /// the writer before's last frames, then refused as busy; one that goes idle meanwhile is taken.
    @Test func aStreamSomethingElseFeedsIsBusyAndOneThatEndsIsTaken() throws {
        let directory = try FakeControl.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/fifo"
        #expect(mkfifo(path, 0o600) == 0)
        let reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        defer { close(reader) }
        let playing = try FakeControl(reply: Self.reply(fifo: path, status: "playing"))
        var started = MonotonicTime.now()
        let error = #expect(throws: AudioDeviceError.self) {
            try SnapcastPCM(
                PCMRequest(device: "snapcast:" + path),
                address: try #require(SnapcastAddress("\(path)?control=127.0.0.1:\(playing.port)")))
        }
        let waited = MonotonicTime.now().seconds - started.seconds
        #expect(error?.reason == .busy && error?.errno == EBUSY && error?.detail.contains("'gong' is playing") == true)
        #expect(waited >= Double(SnapcastPCM.playingWaitMs) / 1000, "\(waited)")

        let ending = try FakeControl(
            replies: [Self.reply(fifo: path, status: "playing"), Self.reply(fifo: path, status: "idle")])
        started = MonotonicTime.now()
        let device = try SnapcastPCM(
            PCMRequest(device: "snapcast:" + path),
            address: try #require(SnapcastAddress("\(path)?control=127.0.0.1:\(ending.port)")))
        device.close()
        #expect(MonotonicTime.now().seconds - started.seconds >= 0.1)
    }

    /// A tcp source gets the same frames, is heard a chunk earlier than the model has them due
    /// (the server stamps its first read so), and a server that stops reading fills the socket
    /// within a bounded time: what the kernel holds is audio no model sees.
    @Test func aTCPSourceGetsEveryFrameAndAServerThatStopsReadingFillsItSoon() throws {
        let (listener, port) = try FakeControl.listeningSocket()
        defer { close(listener) }
        let reply = Self.reply(fifo: "/unused").replacingOccurrences(of: "127.0.0.1:4953", with: "0.0.0.0:\(port)")
        let control = try FakeControl(reply: reply)
        let device = try SnapcastPCM(
            PCMRequest(device: "snapcast:tcp://127.0.0.1:\(port)", latencyMs: 100),
            address: try #require(SnapcastAddress("tcp://127.0.0.1:\(port)?control=127.0.0.1:\(control.port)")))
        defer { device.close() }
        #expect(device.streamID == "radio")
        // The server's 1000 ms, less the chunk its first read is stamped back by (20 ms), and a
        // FLAC block (the stream names no codec).
        #expect(device.configuration.heardAfterNanoseconds == 1_000_000_000 - 20_000_000 + 24_000_000)

        // The lead-in goes first, paced, read as it comes; then the session's frames, written
        // with nobody reading until the socket takes no more.
        let connection = accept(listener, nil, nil)
        defer { close(connection) }
        let leadIn = Int(SnapcastPCM.leadInSeconds * 48000)
        var received = [Int16]()
        var buffer = [Int16](repeating: 0, count: 16384)
        while device.wait(timeoutMs: 200) != 1 {
            let count = recv(connection, &buffer, buffer.count * 2, Int32(MSG_DONTWAIT))
            if count > 0 { received += buffer[0..<(count / 2)] }
        }
        var samples = [Int16](repeating: 0, count: 4800 * 2)
        var sent = [Int16]()
        var full = false
        for block in 0..<200 where !full {
            for index in samples.indices { samples[index] = Int16(truncatingIfNeeded: block * samples.count + index) }
            let written = samples.withUnsafeBytes { device.writeInterleaved($0.baseAddress!, frames: 4800) }
            if written == Int(-EAGAIN) {
                full = true
            } else {
                #expect(written > 0)
                // A part frame taken is sent first next time; these blocks are whole, so count them.
                sent += samples[0..<(max(0, written) * 2)]
                if written < 4800 { full = true }
            }
        }
        // Linux lets an unbounded send buffer grow to 4 MiB (21 s of this stream); gong's holds
        // the buffer it keeps, and the reader's side its own window: 0.28 s here, against 20 s unbounded.
        let held = Double(leadIn + sent.count / 2 - received.count / 2) / 48000
        #expect(full && held < 2, "\(held) s taken with nobody reading")

        // Everything taken arrives, in order, the lead-in's silence first.
        while received.count < leadIn * 2 + sent.count {
            let count = recv(connection, &buffer, buffer.count * 2, 0)
            guard count > 0 else { break }
            received += buffer[0..<(count / 2)]
        }
        #expect(received.prefix(leadIn * 2).allSatisfy { $0 == 0 })
        #expect(Array(received.dropFirst(leadIn * 2).prefix(sent.count)) == sent)
    }

    @Test func aCodecDelaysTheRoomsByItsBlock() {
        #expect(SnapcastStatus.codecDelayFrames(codec: "flac") == 1152)
        #expect(SnapcastStatus.codecDelayFrames(codec: "flac:1") == 1152)
        #expect(SnapcastStatus.codecDelayFrames(codec: "flac: 8") == 4096)
        #expect(SnapcastStatus.codecDelayFrames(codec: "pcm") == 0)
        let status = SnapcastStatus(reply: Data(Self.reply(fifo: "/f").utf8))
        #expect(status?.streams.map(\.codec) == ["flac", "flac"])
    }

    /// A server that reads 960 frames every 20 ms from a moment of its own, looked at after
    /// each write: periods of 51 ms find its schedule within a millisecond whatever the moment,
    /// where periods of 50 ms looked at one point of it and could be 19 ms off.
    @Test func theFIFOsLevelFindsTheServersScheduleAtAnyPhase() {
        let chunk: Int64 = 20_000_000
        for phase in stride(from: Int64(0), to: chunk, by: 1_000_000) {
            func earliest(periodNanoseconds: Int64) -> Int64 {
                var samples = FIFOSamples()
                for write in 1...40 {
                    let now = phase + Int64(write) * periodNanoseconds
                    // Reads done by now: one at the origin (0) and one every chunk since, each
                    // 100 µs late; the origin each look places: now less what was read.
                    let reads = (now - 100_000) / chunk + 1
                    samples.add(now - reads * chunk)
                }
                return samples.earliest ?? .max
            }
            let found = earliest(periodNanoseconds: 51_000_000) + chunk  // frame 0 is due a chunk in
            #expect(found >= 0 && found <= 1_100_000, "phase \(phase): \(found)")
            let same = earliest(periodNanoseconds: 50_000_000) + chunk
            #expect(same >= 0 && same < chunk)
        }
    }

    static func reply(fifo: String, status: String = "idle") -> String {
        """
        {"id":1,"jsonrpc":"2.0","result":{"server":{"groups":[{"id":"g1","stream_id":"gong","clients":[\
        {"id":"room-a","connected":true,"config":{"latency":0,"name":"kitchen"},"host":{"name":"vm"}},\
        {"id":"room-b","connected":false,"config":{"latency":40,"name":""},"host":{"name":"vm"}}]}],\
        "streams":[{"id":"gong","status":"\(status)","uri":{"scheme":"pipe","path":"\(fifo)","host":"",\
        "query":{"sampleformat":"48000:16:2","chunk_ms":"20"},"raw":"pipe://\(fifo)?name=gong"}},\
        {"id":"radio","status":"idle","uri":{"scheme":"tcp","path":"","host":"127.0.0.1:4953",\
        "query":{"sampleformat":"48000:16:2"},"raw":"tcp://127.0.0.1:4953?name=radio"}}]}}}
        """ + "\r\n"
    }
}

/// A control port that answers each connection's first line with the next of `replies` (the
/// last one again once they are used up), as a snapserver answers `Server.GetStatus`.
final class FakeControl: @unchecked Sendable {
    let port: Int
    private let listener: Int32

    convenience init(reply: String) throws { try self.init(replies: [reply]) }

    init(replies: [String]) throws {
        let (listener, port) = try Self.listeningSocket()
        self.port = port
        self.listener = listener
        Thread.detachNewThread {
            var answered = 0
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else {
                    // Closed here, not in deinit: closed there, its number could be given to the
                    // next test's socket before this thread (started late on a busy machine)
                    // first called accept, and this thread would answer that test's requests.
                    close(listener)
                    return
                }
                var line = [UInt8](repeating: 0, count: 4096)
                _ = recv(connection, &line, line.count, 0)
                _ = Array(replies[min(answered, replies.count - 1)].utf8).withUnsafeBytes {
                    send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                answered += 1
                close(connection)
            }
        }
    }

    /// Stops listening; the accepting thread, woken by it, closes the socket.
    deinit { shutdown(listener, Int32(SHUT_RDWR)) }

    /// A TCP socket listening on a port of the kernel's choice on 127.0.0.1, and the port.
    static func listeningSocket() throws -> (descriptor: Int32, port: Int) {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 4) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard bound else {
            close(listener)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        return (listener, Int(UInt16(bigEndian: address.sin_port)))
    }

    /// A port nothing listens on: one the kernel gave and took back.
    static func unusedPort() throws -> Int {
        let control = try FakeControl(reply: "")
        return control.port
    }

    static func temporaryDirectory() throws -> String {
        var template = Array((NSTemporaryDirectory() + "/gong-snapcast-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        return String(cString: made)
    }
}
