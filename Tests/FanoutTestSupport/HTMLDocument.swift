import Foundation

/// An element of an HTML (or inline SVG) page as `HTMLDocument` reads it: its name, its
/// attributes and what it holds.
public struct HTMLElement: Sendable, CustomStringConvertible {
    /// The tag's name, lower-cased.
    public var name: String
    /// The attributes, values with their character references replaced.
    public var attributes: [String: String]
    /// The elements directly inside, in order.
    public var children: [HTMLElement]
    /// The text directly inside and inside every descendant, in order, character references
    /// replaced (as the DOM's `textContent`).
    public var text: String

    /// The element's `class` attribute split into its names.
    public var classes: Set<String> {
        Set((attributes["class"] ?? "").split(separator: " ").map(String.init))
    }

    /// This element's descendants (not itself), in document order.
    public var descendants: [HTMLElement] {
        children.flatMap { [$0] + $0.descendants }
    }

    /// Every element inside called `name`, in document order; with `class`, those among them
    /// that have it among their classes.
    public func elements(_ name: String? = nil, class className: String? = nil) -> [HTMLElement] {
        descendants.filter { element in
            (name.map { element.name == $0 } ?? true) && (className.map { element.classes.contains($0) } ?? true)
        }
    }

    /// The `text` of every element inside called `name`, in document order.
    public func texts(_ name: String) -> [String] {
        elements(name).map(\.text)
    }

    /// How many elements inside are called `name` and hold exactly `text`.
    public func count(_ name: String, text: String) -> Int {
        elements(name).count { $0.text == text }
    }

    /// The first element inside whose `attribute` is `value`.
    public func element(where attribute: String, is value: String) -> HTMLElement? {
        descendants.first { $0.attributes[attribute] == value }
    }

    public var description: String {
        let attributes = attributes.sorted { $0.key < $1.key }.map { " \($0.key)=\"\($0.value)\"" }.joined()
        return "<\(name)\(attributes)>\(text)</\(name)>"
    }
}

/// A page read into its elements, for a test to judge its structure — how many charts, which
/// headings, an element's attribute or value — instead of searching its text. It reads what
/// Fanout writes (every element closed, or void, or self-closed as in SVG); it is no browser.
public struct HTMLDocument: Sendable, CustomStringConvertible {
    /// A made-up element that holds the page's top-level elements.
    public var root: HTMLElement

    /// HTML's void elements, which take no closing tag.
    static let void: Set<String> = [
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr",
    ]
    /// Elements whose content is text up to their closing tag, markup or not.
    static let raw: Set<String> = ["script", "style"]

    public init(_ html: String) {
        var reader = Reader(html.unicodeScalars)
        root = reader.document()
    }

    /// Every element of the page called `name` (any, without), in document order; with `class`,
    /// those among them that have it among their classes.
    public func elements(_ name: String? = nil, class className: String? = nil) -> [HTMLElement] {
        root.elements(name, class: className)
    }

    /// The `text` of every element of the page called `name`, in document order.
    public func texts(_ name: String) -> [String] { root.texts(name) }

    /// How many elements of the page are called `name` and hold exactly `text`.
    public func count(_ name: String, text: String) -> Int { root.count(name, text: text) }

    /// The first element of the page whose `attribute` is `value`.
    public func element(where attribute: String, is value: String) -> HTMLElement? {
        root.element(where: attribute, is: value)
    }

    /// The chart (an `<svg>`) whose `aria-label` is `label`.
    public func chart(_ label: String) -> HTMLElement? {
        element(where: "aria-label", is: label)
    }

    public var description: String { root.text }

    /// A scanner over the page's characters that builds the tree as it goes.
    struct Reader {
        let scalars: [Unicode.Scalar]
        var index = 0

        init(_ scalars: String.UnicodeScalarView) {
            self.scalars = Array(scalars)
        }

        mutating func document() -> HTMLElement {
            // The open elements, outermost first; the root is never closed.
            var open = [HTMLElement(name: "#document", attributes: [:], children: [], text: "")]
            while index < scalars.count {
                if scalars[index] == "<" {
                    tag(into: &open)
                } else {
                    let text = HTMLDocument.decoded(take { $0 != "<" })
                    open[open.count - 1].text += text
                }
            }
            while open.count > 1 { close(&open) }
            return open[0]
        }

        /// Reads one tag (or comment or declaration) at `<`.
        mutating func tag(into open: inout [HTMLElement]) {
            if starts(with: "<!--") {
                skip(past: "-->")
                return
            }
            if starts(with: "<!") || starts(with: "<?") {
                skip(past: ">")
                return
            }
            index += 1
            if index < scalars.count, scalars[index] == "/" {
                index += 1
                let name = take { $0 != ">" }.trimmingCharacters(in: .whitespaces).lowercased()
                index += 1
                // Close up to the matching element; a stray closing tag closes nothing.
                if let depth = open.lastIndex(where: { $0.name == name }), depth > 0 {
                    while open.count > depth { close(&open) }
                }
                return
            }
            let name = take { !$0.properties.isWhitespace && $0 != ">" && $0 != "/" }.lowercased()
            var attributes: [String: String] = [:]
            var selfClosed = false
            while index < scalars.count {
                _ = take { $0.properties.isWhitespace }
                guard index < scalars.count else { break }
                if scalars[index] == ">" {
                    index += 1
                    break
                }
                if scalars[index] == "/" {
                    selfClosed = true
                    index += 1
                    continue
                }
                let attribute = take { !$0.properties.isWhitespace && $0 != "=" && $0 != ">" && $0 != "/" }
                    .lowercased()
                var value = ""
                if index < scalars.count, scalars[index] == "=" {
                    index += 1
                    if index < scalars.count, scalars[index] == "\"" || scalars[index] == "'" {
                        let quote = scalars[index]
                        index += 1
                        value = take { $0 != quote }
                        index += 1
                    } else {
                        value = take { !$0.properties.isWhitespace && $0 != ">" }
                    }
                }
                attributes[attribute] = HTMLDocument.decoded(value)
            }
            open.append(HTMLElement(name: name, attributes: attributes, children: [], text: ""))
            if HTMLDocument.raw.contains(name) {
                let start = index
                skip(past: "</\(name)")
                let end = index < scalars.count ? index - name.count - 2 : scalars.count
                open[open.count - 1].text = String(String.UnicodeScalarView(scalars[start..<max(start, end)]))
                skip(past: ">")
                close(&open)
            } else if selfClosed || HTMLDocument.void.contains(name) {
                close(&open)
            }
        }

        /// Closes the innermost open element into its parent.
        func close(_ open: inout [HTMLElement]) {
            let element = open.removeLast()
            open[open.count - 1].children.append(element)
            open[open.count - 1].text += element.text
        }

        func starts(with prefix: String) -> Bool {
            let wanted = Array(prefix.unicodeScalars)
            guard index + wanted.count <= scalars.count else { return false }
            return Array(scalars[index..<index + wanted.count]) == wanted
        }

        mutating func skip(past marker: String) {
            while index < scalars.count, !starts(with: marker) { index += 1 }
            index = min(scalars.count, index + marker.unicodeScalars.count)
        }

        mutating func take(while condition: (Unicode.Scalar) -> Bool) -> String {
            let start = index
            while index < scalars.count, condition(scalars[index]) { index += 1 }
            return String(String.UnicodeScalarView(scalars[start..<index]))
        }
    }

    /// `text` with its character references (`&amp;`, `&lt;`, `&#8211;`, `&#x2013;`) replaced.
    static func decoded(_ text: String) -> String {
        guard text.firstIndex(of: "&") != nil else { return text }
        let named: [String: String] = [
            "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{A0}",
        ]
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            let after = rest[ampersand...].dropFirst()
            guard let semicolon = after.prefix(10).firstIndex(of: ";") else {
                result += "&"
                rest = after
                continue
            }
            let reference = after[..<semicolon]
            let replacement: String?
            if reference.hasPrefix("#x") || reference.hasPrefix("#X") {
                replacement = UInt32(reference.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
            } else if reference.hasPrefix("#") {
                replacement = UInt32(reference.dropFirst()).flatMap(Unicode.Scalar.init).map { String($0) }
            } else {
                replacement = named[String(reference)]
            }
            if let replacement {
                result += replacement
                rest = after[semicolon...].dropFirst()
            } else {
                result += "&"
                rest = after
            }
        }
        return result + rest
    }
}
