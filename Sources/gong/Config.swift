import GongKit
import GongPractice

/// The config file and the environment, read once by each command that uses them: a bad file
/// is one line naming its line, like a bad pattern (exit 65).
func loadConfig() throws(GongError) -> GongConfig {
    do { return try GongConfig.load() } catch { throw .pattern(error) }
}

/// What a command that plays goes by: the config, with the command's device, latency and
/// volume flags over it (`gong config` shows the same), and the volume checked.
struct PlaySettings {
    var config: GongConfig
    var live: LiveOptions
    var volume: Double

    init(live: LiveOptions, volume: VolumeOption) throws {
        var config = try loadConfig()
        var live = live, volume = volume
        live.adopt(&config)
        volume.adopt(&config)
        try volume.check()
        self.config = config
        self.live = live
        self.volume = volume.volume
    }
}
