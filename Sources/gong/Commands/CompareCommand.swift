import ArgumentParser

struct CompareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "compare", abstract: "(being built)")
}
