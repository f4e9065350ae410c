/// A signal that stops a run cleanly instead of ending the process: the run drains what is in
/// flight, writes its folder marked interrupted, and exits 128 + the signal's number, as shells
/// report a process the signal ended.
public enum StopSignal: Int32, Sendable, Hashable, CaseIterable {
    /// A closed terminal or session.
    case hangUp = 1
    /// Ctrl-C.
    case interrupt = 2
    /// `kill`'s default, and a CI runner's cancel.
    case terminate = 15

    /// `SIGHUP`, `SIGINT`, `SIGTERM`.
    public var name: String {
        switch self {
        case .hangUp: "SIGHUP"
        case .interrupt: "SIGINT"
        case .terminate: "SIGTERM"
        }
    }

    /// The exit status of a run it stopped: 129, 130, 143.
    public var exitStatus: Int32 { 128 + rawValue }
}
