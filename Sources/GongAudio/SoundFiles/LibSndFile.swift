import CSndFile
import GongCore

// Every libsndfile call gong makes, one thin function each, so the whole C surface of sound-file
// I/O can be read at a glance (libsoxr's, for resampling, is in LibSoxr.swift).

func sndfileOpen(_ path: String, mode: Int32, info: inout SF_INFO) -> OpaquePointer? {
    sf_open(path, mode, &info)
}

func sndfileClose(_ file: OpaquePointer) -> Int32 {
    sf_close(file)
}

/// The message libsndfile has for the last failure on `file` (or on the last open when nil).
func sndfileErrorMessage(_ file: OpaquePointer?) -> String {
    guard let text = sf_strerror(file) else { return "unknown error" }
    return String(cString: text)
}

func sndfileErrorCode(_ file: OpaquePointer?) -> Int32 {
    sf_error(file)
}

func sndfileReadFloatFrames(_ file: OpaquePointer, _ buffer: UnsafeMutablePointer<Float>, frames: Int) -> Int {
    Int(sf_readf_float(file, buffer, sf_count_t(frames)))
}

func sndfileWriteFloatFrames(_ file: OpaquePointer, _ buffer: UnsafePointer<Float>, frames: Int) -> Int {
    Int(sf_writef_float(file, buffer, sf_count_t(frames)))
}

func sndfileWriteShortFrames(_ file: OpaquePointer, _ buffer: UnsafePointer<Int16>, frames: Int) -> Int {
    Int(sf_writef_short(file, buffer, sf_count_t(frames)))
}

func sndfileCommand(_ file: OpaquePointer, _ command: Int32, flag: Bool) -> Int32 {
    sf_command(file, command, nil, Int32(flag ? SF_TRUE : SF_FALSE))
}

/// libsndfile's log of what it found while opening a file: where it repaired a header, it says so.
func sndfileLog(_ file: OpaquePointer) -> String {
    var buffer = [CChar](repeating: 0, count: 8192)
    _ = sf_command(file, Int32(SFC_GET_LOG_INFO), &buffer, Int32(buffer.count))
    return String(nulTerminated: buffer)
}

func sndfileFormatCheck(_ info: inout SF_INFO) -> Bool {
    sf_format_check(&info) == SF_TRUE
}
