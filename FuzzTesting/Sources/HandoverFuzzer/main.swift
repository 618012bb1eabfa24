import Foundation
import FuzzHarnesses

/// The harness this process fuzzes, named by `HANDOVER_FUZZ_HARNESS` (tools/fuzz sets it).
/// libFuzzer owns `main`, so nothing here runs as top-level code: the harness is found on the
/// first input.
enum Chosen {
    static let harness: Harness = {
        let name = ProcessInfo.processInfo.environment["HANDOVER_FUZZ_HARNESS"] ?? ""
        guard let harness = Harness.named(name) else {
            fatalError("HANDOVER_FUZZ_HARNESS is \"\(name)\"; one of: \(Harness.all.map(\.name).joined(separator: ", "))")
        }
        return harness
    }()
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = count == 0 ? [] : Array(UnsafeRawBufferPointer(start: start, count: count))
    Chosen.harness.run(input)
    return 0
}
