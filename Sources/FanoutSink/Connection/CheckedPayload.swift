import FanoutPayload
import Glibc

/// The last payload a connection found to be one JSON object, so that the same bytes again —
/// a fan-out's one notification to device after device — are known to be one by comparing them
/// rather than by reading them again (`PayloadSyntax`: 8.4% of the sink's CPU under h2load
/// sending one body, more than any other function). The verdict is the bytes': equal bytes
/// have it, so nothing is skipped that would be found; a payload that differs (personalised per
/// device) is compared up to its first different byte, then read and, found an object, kept.
///
/// ```
///   storage:  ┌ count (Int) ┬ up to `capacity` bytes of the last object ──────────┐
///             └─────────────┴─────────────────────────────────────────────────────┘
///   body ── count and bytes equal? ──yes──► an object
///        └─no──► PayloadSyntax ──object──► kept (when it fits) ──► an object
///                              └─not one──► not one (nothing kept)
/// ```
///
/// A view of memory its owner (`CheckedPayload.Storage`, one a connection's checks) allocates
/// once and frees: copies share it, and handing it to a check costs no reference count.
struct CheckedPayload {
    /// The longest payload kept: APNs alerts are a few hundred bytes; a longer one is read each
    /// time.
    static let capacity = 1024

    private let storage: UnsafeMutableRawPointer

    /// The length of the payload kept (0: none yet).
    var keptCount: Int { storage.load(as: Int.self) }

    /// Whether `body` is one JSON object. Out of line: scripts/cost.sh's `json-check` stage.
    @inline(never)
    func isJSONObject(_ body: UnsafeRawBufferPointer) -> Bool {
        let kept = storage.load(as: Int.self)
        let bytes = storage + MemoryLayout<Int>.stride
        if kept == body.count, kept > 0, let base = body.baseAddress, memcmp(bytes, base, kept) == 0 { return true }
        guard PayloadSyntax.problem(in: body) == nil else { return false }
        if body.count <= Self.capacity, let base = body.baseAddress {
            bytes.copyMemory(from: base, byteCount: body.count)
            storage.storeBytes(of: body.count, as: Int.self)
        }
        return true
    }

    /// Owns a `CheckedPayload`'s memory: allocated when it is made, nothing kept, freed with it.
    final class Storage {
        let payload: CheckedPayload

        init() {
            let storage = UnsafeMutableRawPointer.allocate(
                byteCount: MemoryLayout<Int>.stride + CheckedPayload.capacity,
                alignment: MemoryLayout<Int>.alignment
            )
            storage.storeBytes(of: 0, as: Int.self)
            payload = CheckedPayload(storage: storage)
        }

        deinit { payload.storage.deallocate() }
    }
}
