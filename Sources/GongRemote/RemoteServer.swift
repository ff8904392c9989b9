import FoundationEssentials
import Glibc
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOWebSocket

/// `gong remote`'s server: HTTP and WebSocket on one event loop thread that sleeps in
/// `epoll_wait` while nothing happens. No async runtime and no timer runs while no client is
/// connected; a connection's timers (its request deadline, a WebSocket's ping) live and die
/// with it.
public final class RemoteServer: Sendable {
    public let group: MultiThreadedEventLoopGroup
    public let hub: RemoteHub
    private let channel: Channel

    /// The address it listens on, with the port it got (for port 0).
    public var address: SocketAddress? { channel.localAddress }
    public var port: Int { channel.localAddress?.port ?? 0 }

    /// Binds and starts serving. (`gong remote` refuses to run as root before it gets here.)
    public init(configuration: RemoteConfiguration) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let loop = group.next()
        let hub = RemoteHub(configuration: configuration, loop: loop)
        let limits = configuration.limits
        do {
            try loop.submit { try hub.start() }.wait()
            channel = try ServerBootstrap(group: group)
                .serverChannelOption(.backlog, value: 64)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelOption(.writeBufferWaterMark, value: .init(low: 64 * 1024, high: 256 * 1024))
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        guard hub.admit(channel) else { throw RemoteServerError.tooManyConnections }
                        let upgrader = NIOWebSocketServerUpgrader(
                            maxFrameSize: limits.maxFrameBytes,
                            shouldUpgrade: { channel, head in
                                channel.eventLoop.makeSucceededFuture(hub.webSocketHeaders(for: head))
                            },
                            upgradePipelineHandler: { channel, head in
                                channel.eventLoop.makeCompletedFuture {
                                    let pipeline = channel.pipeline.syncOperations
                                    // The HTTP deadline and byte count give way to the socket's own.
                                    let guardHandler = try pipeline.handler(type: ConnectionGuard.self)
                                    pipeline.removeHandler(guardHandler, promise: nil)
                                    let http = try pipeline.handler(type: RemoteHTTPHandler.self)
                                    pipeline.removeHandler(http, promise: nil)
                                    guard let device = hub.device(for: head) else {
                                        throw RemoteServerError.unauthorized
                                    }
                                    try pipeline.addHandler(
                                        RemoteWebSocketHandler(
                                            hub: hub, device: device, pingSeconds: limits.pingSeconds))
                                }
                            })
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(
                            ConnectionGuard(
                                maxRequestBytes: limits.maxRequestBytes, requestSeconds: limits.requestSeconds))
                        try pipeline.configureHTTPServerPipeline(
                            withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                        try pipeline.addHandler(RemoteHTTPHandler(hub: hub))
                    }
                }
                .bind(host: configuration.host, port: configuration.port).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw RemoteServerError.cannotListen(
                "\(configuration.host):\(configuration.port)", String(describing: error))
        }
        self.group = group
        self.hub = hub
    }

    /// Until the server is closed.
    public func wait() throws { try channel.closeFuture.wait() }

    public func close() {
        try? channel.close().wait()
        let hub = self.hub
        try? hub.loop.submit { hub.closeAll() }.wait()
        try? group.syncShutdownGracefully()
    }
}

public enum RemoteServerError: Error, Sendable, CustomStringConvertible {
    case cannotListen(String, String)
    case tooManyConnections
    case unauthorized

    public var description: String {
        switch self {
        case .cannotListen(let address, let why): "cannot listen on \(address): \(why)"
        case .tooManyConnections: "too many connections"
        case .unauthorized: "unauthorized"
        }
    }
}

/// Said by the HTTP handler toward the socket: a whole request has arrived (its deadline is
/// met), or its answer is written (the next request's deadline starts).
enum RequestProgress {
    case arrived
    case answered
}

/// First in every HTTP connection's pipeline: the request's bytes are counted (a request larger
/// than the limit is answered 413 and the connection closed, unparsed) and a request must arrive
/// whole within `requestSeconds` (a slow or silent client, slowloris, is answered 408 and
/// dropped). Removed when the connection becomes a WebSocket.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let maxRequestBytes: Int
    private let requestSeconds: Double
    private var bytes = 0
    private var deadline: Scheduled<Void>?
    private var refused = false

    init(maxRequestBytes: Int, requestSeconds: Double) {
        self.maxRequestBytes = maxRequestBytes
        self.requestSeconds = requestSeconds
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !refused else { return }
        bytes += unwrapInboundIn(data).readableBytes
        if bytes > maxRequestBytes {
            refuse(context, status: "413 Content Too Large", message: "a request is at most \(maxRequestBytes) bytes")
            return
        }
        context.fireChannelRead(data)
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        switch event as? RequestProgress {
        case .arrived:
            deadline?.cancel()
            deadline = nil
            bytes = 0
            promise?.succeed()
        case .answered:
            arm(context)
            promise?.succeed()
        case nil:
            context.triggerUserOutboundEvent(event, promise: promise)
        }
    }

    private func arm(_ context: ChannelHandlerContext) {
        deadline?.cancel()
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(requestSeconds * 1e9))) {
            [self] in
            refuse(loopBound.value, status: "408 Request Timeout", message: "the request took too long to arrive")
        }
    }

    /// Answers in bytes of its own (the HTTP encoder may be mid-request) and closes.
    private func refuse(_ context: ChannelHandlerContext, status: String, message: String) {
        refused = true
        deadline?.cancel()
        let body = #"{"error":{"code":"refused","message":"\#(message)"}}"#
        let text =
            "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        var buffer = context.channel.allocator.buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(buffer)).whenComplete { _ in channel.close(promise: nil) }
    }
}

/// A request as the API sees it.
public struct RemoteRequest: Sendable {
    public var head: HTTPRequestHead
    public var body: [UInt8]
    public var path: String { String(head.uri.prefix { $0 != "?" }) }
    public var query: [String: String] {
        guard let mark = head.uri.firstIndex(of: "?") else { return [:] }
        var fields: [String: String] = [:]
        for pair in head.uri[head.uri.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            fields[String(parts[0])] = parts.count > 1 ? String(parts[1]).removingPercentEncodingSafe : ""
        }
        return fields
    }
}

extension String {
    /// `%XX` decoded and `+` as a space; an undecodable text stays as it came.
    var removingPercentEncodingSafe: String {
        var bytes: [UInt8] = []
        var iterator = Array(utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next(),
                let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
            {
                bytes.append(value)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// An answer: status, type, body and headers of its own (a cookie).
public struct RemoteResponse: Sendable {
    public var status: HTTPResponseStatus
    public var contentType: String
    public var body: [UInt8]
    public var headers: [(String, String)] = []
    public var close = false

    public init(status: HTTPResponseStatus, contentType: String, body: [UInt8], headers: [(String, String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    public static func json(_ status: HTTPResponseStatus, _ text: String, headers: [(String, String)] = []) -> Self {
        RemoteResponse(status: status, contentType: "application/json", body: Array(text.utf8), headers: headers)
    }

    /// `{"error": {"code": …, "message": …}}`: the code for programs, the message for people.
    public static func error(_ status: HTTPResponseStatus, _ code: String, _ message: String) -> Self {
        json(status, #"{"error":{"code":\#(JSONText.string(code)),"message":\#(JSONText.string(message))}}"#)
    }
}

/// Gathers one request (its size already bounded by `ConnectionGuard`) and writes the hub's answer.
final class RemoteHTTPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let hub: RemoteHub
    private var head: HTTPRequestHead?
    private var body: [UInt8] = []

    init(hub: RemoteHub) { self.hub = hub }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            self.head = head
            body = []
        case .body(let buffer):
            body += buffer.readableBytesView
        case .end:
            guard let head else { return }
            self.head = nil
            context.triggerUserOutboundEvent(RequestProgress.arrived, promise: nil)
            let request = RemoteRequest(head: head, body: body)
            let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
            hub.respond(to: request) { [self] response in
                write(response, keepAlive: head.isKeepAlive && !response.close, context: loopBound.value)
            }
        }
    }

    private func write(_ response: RemoteResponse, keepAlive: Bool, context: ChannelHandlerContext) {
        guard context.channel.isActive else { return }
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: response.contentType)
        headers.add(name: "Content-Length", value: String(response.body.count))
        headers.add(name: "Cache-Control", value: "no-store")
        headers.add(name: "X-Content-Type-Options", value: "nosniff")
        headers.add(name: "Referrer-Policy", value: "no-referrer")
        headers.add(name: "X-Frame-Options", value: "DENY")
        for (name, value) in response.headers { headers.add(name: name, value: value) }
        if !keepAlive { headers.add(name: "Connection", value: "close") }
        let head = HTTPResponseHead(version: .http1_1, status: response.status, headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        var buffer = context.channel.allocator.buffer(capacity: response.body.count)
        buffer.writeBytes(response.body)
        context.write(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        let channel = context.channel
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).assumeIsolated().whenComplete { _ in
            if keepAlive {
                loopBound.value.triggerUserOutboundEvent(RequestProgress.answered, promise: nil)
            } else {
                channel.close(promise: nil)
            }
        }
    }

    /// A refused WebSocket upgrade is said here before the request itself arrives, to be answered
    /// with why; anything else ends the connection.
    func errorCaught(context: ChannelHandlerContext, error: Error) {
        if error is NIOWebSocketUpgradeError { return }
        context.close(promise: nil)
    }
}

/// One phone's live feed: the hub's pushes go out as text frames; the phone's time probes are
/// answered at once (its clock offset is learned from them); a ping goes out every
/// `pingSeconds` and a socket silent for two of them is closed.
final class RemoteWebSocketHandler: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    let hub: RemoteHub
    let device: RemoteDevice
    private let pingSeconds: Double
    private var lastHeard = NIODeadline.now()
    private var pinger: Scheduled<Void>?
    private var closing = false

    init(hub: RemoteHub, device: RemoteDevice, pingSeconds: Double) {
        self.hub = hub
        self.device = device
        self.pingSeconds = pingSeconds
    }

    func handlerAdded(context: ChannelHandlerContext) {
        hub.attach(context.channel, device: device)
        schedulePing(context)
        hub.greet(context.channel, device: device)
    }

    /// The next ping, or the close of a socket silent for two pings' time.
    private func schedulePing(_ context: ChannelHandlerContext) {
        let interval = TimeAmount.nanoseconds(Int64(pingSeconds * 1e9))
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        pinger = context.eventLoop.assumeIsolated().scheduleTask(in: interval) { [self] in
            let context = loopBound.value
            if NIODeadline.now() - lastHeard > interval * 2 {
                close(context, code: .goingAway)
            } else {
                send(
                    context,
                    WebSocketFrame(fin: true, opcode: .ping, data: context.channel.allocator.buffer(capacity: 0)))
                schedulePing(context)
            }
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        pinger?.cancel()
        hub.detach(context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        pinger?.cancel()
        hub.detach(context.channel)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        lastHeard = .now()
        switch frame.opcode {
        case .ping:
            send(context, WebSocketFrame(fin: true, opcode: .pong, data: frame.unmaskedData))
        case .pong:
            break
        case .connectionClose:
            close(context, code: .normalClosure)
        case .text where frame.fin:
            var data = frame.unmaskedData
            let text = data.readString(length: data.readableBytes) ?? ""
            if let reply = hub.answer(webSocketText: text) {
                var buffer = context.channel.allocator.buffer(capacity: reply.utf8.count)
                buffer.writeString(reply)
                send(context, WebSocketFrame(fin: true, opcode: .text, data: buffer))
            }
        default:
            // Binary and fragmented messages are not part of the protocol.
            close(context, code: .unacceptableData)
        }
    }

    private func send(_ context: ChannelHandlerContext, _ frame: WebSocketFrame) {
        guard !closing else { return }
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    private func close(_ context: ChannelHandlerContext, code: WebSocketErrorCode) {
        guard !closing else { return }
        closing = true
        var buffer = context.channel.allocator.buffer(capacity: 2)
        buffer.write(webSocketErrorCode: code)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: buffer)))
            .whenComplete { _ in channel.close(promise: nil) }
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}

/// JSON text built by hand around raw JSON from the control sockets.
public enum JSONText {
    public static func string(_ value: String) -> String {
        var text = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case let control where control.value < 0x20:
                let hex = String(control.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        return text + "\""
    }
}
