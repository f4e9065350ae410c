import ArgumentParser
import FanoutRun

extension RunStatus {
    /// Ends the command with the run's status as its exit status.
    func exit() throws {
        if self != .clean { throw ExitCode(rawValue) }
    }
}
