import Glibc
import NIOCore
import NIOPosix

/// inotify on the control socket directory and the remote's own, read by the event loop like
/// any socket: a session's socket appearing, or `devices.json` rewritten by `gong remote
/// devices revoke`, is seen at once, with no polling and no timer.
enum DirectoryWatch {
    static func start(directories: [String], loop: EventLoop, changed: @escaping () -> Void) throws -> EventLoopFuture<
        Channel
    > {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { throw WatchError(code: errno) }
        for directory in directories {
            let mask = UInt32(IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE)
            if inotify_add_watch(descriptor, directory, mask) < 0 {
                let code = errno
                close(descriptor)
                throw WatchError(code: code)
            }
        }
        let handler = NIOLoopBound(WatchHandler(changed: changed), eventLoop: loop)
        let opening = NIOPipeBootstrap(group: loop)
            // An inotify read must fit a whole event (up to 16 bytes and a name of 256).
            .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 4096))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(handler.value) }
            }
            .takingOwnershipOfDescriptor(input: descriptor)
        opening.whenFailure { _ in close(descriptor) }
        return opening
    }

    struct WatchError: Error, CustomStringConvertible {
        var code: Int32
        var description: String { "inotify: \(String(cString: strerror(code)))" }
    }

    final class WatchHandler: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        let changed: () -> Void
        init(changed: @escaping () -> Void) { self.changed = changed }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}

        /// One look after each batch of events, however many.
        func channelReadComplete(context: ChannelHandlerContext) { changed() }
    }
}
