import Foundation
@testable import GongKit
import Testing

@Suite struct SoundBankTests {
    @Test func userSoundsReplaceShippedOnesByName() throws {
        let scratch = try ScratchDirectory()
        try Data("x".utf8).write(to: URL(fileURLWithPath: scratch.file("gong.wav")))
        let bank = SoundBank(directories: [scratch.path, SoundBank.sourceTreeSounds])
        #expect(bank.path(of: "gong") == scratch.file("gong.wav"))
        #expect(bank.path(of: "bowl") == SoundBank.sourceTreeSounds + "/bowl.flac")
        #expect(bank.path(of: "nosuch") == nil)
    }

    @Test func aCueFileThatDoesNotExistIsNamed() {
        #expect(throws: SoundBankError(sound: "/no/bell.wav", usedBy: "end", message: "end: sound file '/no/bell.wav' not found")) {
            try shippedBank.resolve("/no/bell.wav", usedBy: "end")
        }
    }

    @Test func theStandardSearchPathPutsExplicitDirectoriesFirstAndTheSourceTreeLast() {
        let bank = SoundBank.standard(explicit: "/mine", environment: ["GONG_SOUNDS": "/env"],
                                      gongDirectories: GongDirectories(environment: ["HOME": "/home/me"]))
        #expect(Array(bank.directories.prefix(3)) == ["/mine", "/env", "/home/me/.local/share/gong/sounds"])
        #expect(bank.directories.last == SoundBank.sourceTreeSounds)
    }
}
