import NIOCore
import NIOPosix

/// The remote's side of the control sockets (`ControlSockets`): one JSON line out, lines back,
/// on the same event loop as everything else, so a socket that is slow to answer holds up
/// nothing but its own request.
enum ControlLink {
    /// Connects to `path`, sends `line` and hands the first line back to `reply` (nil: no answer
    /// within `seconds`, or the socket is gone). `more` takes every later line (a subscription's
    /// events) and `ended` is called when the socket closes; without `more` the connection
    /// closes after the reply.
    static func request(
        _ line: String, to path: String, loop: EventLoop, seconds: Double,
        reply: @escaping (String?) -> Void, more: ((String) -> Void)? = nil, ended: (() -> Void)? = nil
    ) {
        let handler = ControlLineHandler(line: line, reply: reply, more: more, ended: ended)
        let loopBound = NIOLoopBound(handler, eventLoop: loop)
        let connecting = ClientBootstrap(group: loop)
            .connectTimeout(.nanoseconds(Int64(seconds * 1e9)))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder()))
                    try channel.pipeline.syncOperations.addHandler(loopBound.value)
                }
            }
            .connect(unixDomainSocketPath: path)
        connecting.assumeIsolated().whenComplete { result in
            switch result {
            case .success(let channel):
                // The reply may have come already (connecting completes after the first read).
                guard !loopBound.value.answered else { return }
                let timeout = loop.assumeIsolated().scheduleTask(in: .nanoseconds(Int64(seconds * 1e9))) {
                    guard !loopBound.value.answered else { return }
                    loopBound.value.giveUp()
                    channel.close(promise: nil)
                }
                loopBound.value.timeout = timeout
            case .failure:
                loopBound.value.giveUp()
            }
        }
    }
}

/// Lines of at most `ControlProtocol`'s size and a status's (a megabyte at most).
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = String
    static let maxLineBytes = 1 << 20

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maxLineBytes { throw ByteToMessageDecoderError.PayloadTooLargeError() }
            return .needMoreData
        }
        let length = newline - buffer.readerIndex
        let line = buffer.readString(length: length) ?? ""
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(wrapInboundOut(line))
        return .continue
    }
}

final class ControlLineHandler: ChannelInboundHandler {
    typealias InboundIn = String
    typealias OutboundOut = ByteBuffer

    private let line: String
    private var reply: ((String?) -> Void)?
    private let more: ((String) -> Void)?
    private var ended: (() -> Void)?
    var timeout: Scheduled<Void>?
    var answered: Bool { reply == nil }

    init(line: String, reply: @escaping (String?) -> Void, more: ((String) -> Void)?, ended: (() -> Void)?) {
        self.line = line
        self.reply = reply
        self.more = more
        self.ended = ended
    }

    func channelActive(context: ChannelHandlerContext) {
        var buffer = context.channel.allocator.buffer(capacity: line.utf8.count + 1)
        buffer.writeString(line + "\n")
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let text = unwrapInboundIn(data)
        if let reply {
            self.reply = nil
            timeout?.cancel()
            reply(text)
            if more == nil { context.close(promise: nil) }
        } else {
            more?(text)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        giveUp()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }

    /// No reply is coming: said once, as nil.
    func giveUp() {
        timeout?.cancel()
        if let reply {
            self.reply = nil
            reply(nil)
        }
        if let ended {
            self.ended = nil
            ended()
        }
    }
}
