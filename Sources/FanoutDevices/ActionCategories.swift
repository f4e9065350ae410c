import FanoutScenarioTerms
import Foundation

/// The app's notification categories as a file (`--device-categories FILE`, issue #63): each
/// action's id, whether it runs in the foreground (it opens the app: its request, then the
/// launch fetches) or the background (its one request, the app not opened), and its request.
/// A notification's actions come from its payload where it carries them (`category-actions`);
/// else from here, by its `aps.category`. One action a line:
///
/// ```
///   # category  action    mode        request (optional: the action kind's default)
///   poll        poll_ok   foreground  POST /polls/{campaign}/ok
///   poll        poll_nok  background  POST /polls/{campaign}/nok
///   reminder    snooze    background
/// ```
/// Blank lines and `#` comments are skipped. An action id may be in several categories, with
/// one mode and request everywhere (iOS runs an action by its id).
public struct ActionCategories: Sendable, Hashable {
    public struct Action: Sendable, Hashable {
        public var categories: [String]
        public var id: String
        public var background: Bool
        /// `METHOD PATH`, checked for its form here, for its fields by the return engine.
        public var request: String?
        /// Where the action was first named, `FILE:LINE`.
        public var place: String
    }

    public var file: String
    /// By id, in the order first named.
    public var actions: [Action]

    public init(contentsOfFile path: String) throws(SinkScenarioError) {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw SinkScenarioError("--device-categories \(path): cannot be read (\(error.localizedDescription))")
        }
        try self.init(parsing: text, file: path)
    }

    public init(parsing text: String, file: String) throws(SinkScenarioError) {
        self.file = file
        actions = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let place = "\(file):\(index + 1)"
            let line = raw.prefix { $0 != "#" }
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if words.isEmpty { continue }
            guard words.count == 3 || words.count == 5 else {
                throw SinkScenarioError(
                    "\(place): a line is CATEGORY ACTION foreground|background [METHOD PATH], like poll poll_ok foreground POST /polls/ok; got \(line.trimmingCharacters(in: .whitespaces))"
                )
            }
            let mode = words[2]
            guard mode == "foreground" || mode == "background" else {
                throw SinkScenarioError("\(place): the mode is foreground or background, not \(mode)")
            }
            var request: String?
            if words.count == 5 {
                guard words[3].allSatisfy({ $0.isASCII && $0.isUppercase }), words[4].hasPrefix("/") else {
                    throw SinkScenarioError(
                        "\(place): a request is METHOD PATH, like POST /polls/ok; got \(words[3]) \(words[4])"
                    )
                }
                request = "\(words[3]) \(words[4])"
            }
            let (category, id, background) = (String(words[0]), String(words[1]), mode == "background")
            if let known = actions.firstIndex(where: { $0.id == id }) {
                guard actions[known].background == background, actions[known].request == request else {
                    throw SinkScenarioError(
                        "\(place): \(id) was named at \(actions[known].place) with another mode or request (iOS runs an action by its id)"
                    )
                }
                if !actions[known].categories.contains(category) { actions[known].categories.append(category) }
            } else {
                actions.append(
                    Action(categories: [category], id: id, background: background, request: request, place: place)
                )
            }
        }
        guard !actions.isEmpty else { throw SinkScenarioError("--device-categories \(file) names no action") }
    }

    /// The action with id `id`, if the file names it.
    public func action(_ id: String) -> Action? { actions.first { $0.id == id } }
}
