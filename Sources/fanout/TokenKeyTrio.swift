import ArgumentParser

/// Token auth's three options, `--key-file`, `--key-id` and `--team-id`, as `fanout send` and
/// `fanout sink` both take them (each with its own help): all three, or none.
enum TokenKeyTrio {
    /// Whether all three are given; refuses some without the others.
    static func given(keyFile: String?, keyId: String?, teamId: String?) throws -> Bool {
        switch [keyFile, keyId, teamId].compactMap({ $0 }).count {
        case 0: false
        case 3: true
        default: throw ValidationError("Token auth needs --key-file, --key-id and --team-id together.")
        }
    }
}
