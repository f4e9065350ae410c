/// A job that could not run, said in one line a person can act on: what, and where (the
/// option, the file, the address). `kind` is what a caller matches on; `description` what a
/// person reads.
public struct JobError: Error, CustomStringConvertible, Sendable, Equatable {
    /// What stood in the way, by what would remove it.
    public enum Kind: Sendable, Hashable {
        /// An option's value, or options together, that cannot be used: the command line must
        /// change.
        case option
        /// A file or folder the job reads is missing, unreadable, or does not hold what it must.
        case input
        /// A file or folder the job writes cannot be written.
        case output
        /// This machine stood in the way: an address to listen on, a process to start, a run that
        /// did not end in time.
        case resource
        /// The job ran, and what it measured cannot serve (a calibration that did not complete, a
        /// step that failed, an invalid run to compare).
        case outcome
    }

    public var kind: Kind
    public var description: String

    public init(_ kind: Kind, _ description: String) {
        self.kind = kind
        self.description = description
    }

    public static func option(_ description: String) -> JobError { JobError(.option, description) }
    public static func input(_ description: String) -> JobError { JobError(.input, description) }
    public static func output(_ description: String) -> JobError { JobError(.output, description) }
    public static func resource(_ description: String) -> JobError { JobError(.resource, description) }
    public static func outcome(_ description: String) -> JobError { JobError(.outcome, description) }
}
