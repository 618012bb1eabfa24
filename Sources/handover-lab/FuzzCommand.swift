import ArgumentParser
import Foundation
import FuzzHarnesses

/// `handover-lab fuzz`: the fuzzing harnesses' bodies on the ordinary build: list them, replay
/// inputs through them (what `tools/test` does with every corpus file and fail case), and make
/// their seeds from a rehearsal.
struct FuzzCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fuzz", abstract: "The fuzzing harnesses on the ordinary build: list, replay, seeds.",
        subcommands: [List.self, Replay.self, Seeds.self])

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print each harness's name and what it drives.")

        func run() {
            for harness in Harness.all { print("\(harness.name)\t\(harness.summary)") }
        }
    }

    struct Replay: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run every file given (or in the directories given) through one harness.",
            discussion: "Each file's name is printed to standard error before it runs: a file that traps is the last one named.")

        @Argument(help: "The harness.") var harness: String
        @Argument(help: "Input files or directories of them.") var inputs: [String]

        func run() throws {
            guard let body = Harness.named(harness) else {
                throw ValidationError("no harness \(harness); `handover-lab fuzz list` names them")
            }
            var files: [String] = []
            for input in inputs {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: input, isDirectory: &isDirectory) else { continue }
                if isDirectory.boolValue {
                    files += try FileManager.default.contentsOfDirectory(atPath: input).filter { !$0.hasPrefix(".") }.sorted().map {
                        input + "/" + $0
                    }
                } else {
                    files.append(input)
                }
            }
            var accepted = 0
            for file in files {
                FileHandle.standardError.write(Data("replay \(file)\n".utf8))
                guard let data = FileManager.default.contents(atPath: file) else { throw ValidationError("cannot read \(file)") }
                if body.run(Array(data)) { accepted += 1 }
            }
            print("\(harness): \(files.count) inputs replayed, \(accepted) accepted, none trapped")
        }
    }

    struct Seeds: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every harness's seed inputs, made from a rehearsal's files, into OUT/<harness>/.")

        @Option(help: "The rehearsal's directory (handover demo --directory, with sender-checkpoint.txt, bundle-one/, bundle-two/).") var demo: String
        @Option(help: "The corpus directory.") var out: String

        func run() throws {
            for (name, seeds) in try FuzzSeeds.make(fromDemo: demo) {
                let dir = out + "/" + name
                try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
                for (file, bytes) in seeds {
                    guard FileManager.default.createFile(atPath: dir + "/seed-" + file, contents: Data(bytes)) else {
                        throw ValidationError("cannot write \(dir)/seed-\(file)")
                    }
                }
                print("\(name): \(seeds.count) seeds")
            }
        }
    }
}
