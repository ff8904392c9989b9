import GongKit

/// The config file and the environment, read once by each command that uses them: a bad file
/// is one line naming its line, like a bad pattern (exit 65).
func loadConfig() throws(GongError) -> GongConfig {
    do { return try GongConfig.load() } catch { throw .pattern(error) }
}
