import FanoutResults
import Foundation
import NIOCore

/// A job that could not run: what stood in the way (`kind`), where (`place`: the option and its
/// value, the file, the address) and what is wrong there (`problem`). A caller or a test matches
/// those; the words a person reads are made from them once, here (`description`):
///
/// ```
/// place                                 problem                    description
/// .optionValue("--key-file", "k.p8")    .cannotRead("no such file") cannot read --key-file k.p8: no such file
/// .file("results/a/plan.json")          .cannotWrite("read-only")   cannot write results/a/plan.json: read-only
/// .address("--serve", "::1", 80)        .cannotListen("…")          --serve [::1]:80: cannot listen there: …
/// .optionValue("--tokens", "t.txt")     .holdsNo("device token")    --tokens t.txt holds no device token
/// .option("--fleet")                    .said("… twice in 'x'")     --fleet: … twice in 'x'
/// .command                              .said("--fcm-bearer needs --project")
/// ```
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

    /// Where: what a person looks at or changes.
    public enum Place: Sendable, Hashable, CustomStringConvertible {
        /// An option, by its name: `--fleet`.
        case option(String)
        /// An option with the value given, a file's path most often: `--tokens tokens.txt`.
        case optionValue(String, String)
        /// A file or folder the job reads or writes, by its path.
        case file(String)
        /// An address to listen on, with the option that gave it (`nil`: the command's own).
        case address(String?, host: String, port: Int)
        /// A part of the job, by what a person calls it: `step at 2000/s`, `the FCM half`.
        case part(String)
        /// The command line as a whole: options together, or none in particular.
        case command

        public var description: String {
            switch self {
            case .option(let name): name
            case .optionValue(let name, let value): "\(name) \(value)"
            case .file(let path): path
            case .address(let option, let host, let port): (option.map { $0 + " " } ?? "") + Self.address(host, port)
            case .part(let name): name
            case .command: ""
            }
        }

        /// `host:port`, an IPv6 host in brackets.
        static func address(_ host: String, _ port: Int) -> String {
            host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    /// What is wrong at the place.
    public enum Problem: Sendable, Equatable {
        /// It cannot be read, in the system's or the reader's words (empty: none to add).
        case cannotRead(String)
        /// It cannot be written, in the system's words.
        case cannotWrite(String)
        /// Nothing can listen there, in the system's words.
        case cannotListen(String)
        /// It holds none of what the job needs: `device token`.
        case holdsNo(String)
        /// A run folder that is invalid for its reasons, and what that means here.
        case invalidRun([InvalidReason], consequence: String)
        /// A rule of the job's, or an error of a part of it, in words.
        case said(String)
        /// A reader's error that names its own place (`devices.json:3: …`), after the option
        /// that gave the file: `--fcm-credentials devices.json:3: …`.
        case located(String)
    }

    public var kind: Kind
    public var place: Place
    public var problem: Problem

    public init(_ kind: Kind, at place: Place = .command, _ problem: Problem) {
        self.kind = kind
        self.place = place
        self.problem = problem
    }

    public var description: String {
        let place = self.place.description
        func at(_ words: String) -> String { place.isEmpty ? words : "\(place): \(words)" }
        switch problem {
        case .cannotRead(let reason): return "cannot read \(place)" + (reason.isEmpty ? "" : ": \(reason)")
        case .cannotWrite(let reason): return "cannot write \(place): \(reason)"
        case .cannotListen(let cause):
            if case .address(nil, let host, let port) = self.place {
                return "cannot listen on \(Place.address(host, port)): \(cause)"
            }
            return at("cannot listen there: \(cause)")
        case .holdsNo(let what): return "\(place) holds no \(what)"
        case .invalidRun(let reasons, let consequence):
            return "\(place) is an invalid run (\(reasons.map(\.description).joined(separator: "; "))): \(consequence)"
        case .said(let words): return at(words)
        case .located(let words): return place.isEmpty ? words : "\(place) \(words)"
        }
    }

    /// `place` cannot be read (input).
    public static func cannotRead(_ place: Place, _ reason: String) -> JobError {
        JobError(.input, at: place, .cannotRead(reason))
    }

    /// `place` cannot be written (output).
    public static func cannotWrite(_ place: Place, _ reason: String) -> JobError {
        JobError(.output, at: place, .cannotWrite(reason))
    }

    /// `place` holds none of `what` (input).
    public static func holdsNo(_ place: Place, _ what: String) -> JobError {
        JobError(.input, at: place, .holdsNo(what))
    }

    /// An option's value, or options together, that cannot be used.
    public static func option(_ place: Place, _ words: String) -> JobError {
        JobError(.option, at: place, .said(words))
    }

    /// What a file or folder the job reads holds cannot serve.
    public static func input(_ place: Place, _ words: String) -> JobError { JobError(.input, at: place, .said(words)) }

    /// A reader's `error` that names its own place, the file `option` gave (input).
    public static func read(_ option: String, _ error: any Error) -> JobError {
        JobError(.input, at: .option(option), .located("\(error)"))
    }

    /// A file or folder the job writes cannot take what it writes.
    public static func output(_ place: Place, _ words: String) -> JobError {
        JobError(.output, at: place, .said(words))
    }

    /// This machine stood in the way.
    public static func resource(_ place: Place, _ words: String) -> JobError {
        JobError(.resource, at: place, .said(words))
    }

    /// What the job measured cannot serve.
    public static func outcome(_ place: Place, _ words: String) -> JobError {
        JobError(.outcome, at: place, .said(words))
    }
}

extension JobError {
    /// Nothing can listen at `place` (an `.address` most often), `error` said in the system's
    /// words: swift-nio's `IOError` says "bind(descriptor:ptr:bytes:): Address already in use)
    /// (errno: 98)", a stray parenthesis after the call's Swift signature (issue 64); this says
    /// "address already in use (errno 98)".
    static func cannotListen(_ place: Place, _ error: any Error) -> JobError {
        JobError(.resource, at: place, .cannotListen(listenCause(error)))
    }

    /// An error of listening as a person reads it: the system's words for an `IOError`.
    static func listenCause(_ error: any Error) -> String {
        guard let failure = error as? IOError else { return "\(error)" }
        let cause = String(cString: strerror(failure.errnoCode))
        return "\(cause.prefix(1).lowercased() + cause.dropFirst()) (errno \(failure.errnoCode))"
    }
}
