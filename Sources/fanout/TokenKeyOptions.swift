import ArgumentParser

/// Token auth's three options, `--key-file`, `--key-id` and `--team-id`, as `fanout send`
/// (which signs with the key) and `fanout sink` (which verifies with it) both take them: all
/// three, or none.
struct TokenKeyOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Token auth: the ES256 key (.p8; the sink also takes its public key as PEM).",
            valueName: "file"
        )
    )
    var keyFile: String?

    @Option(name: .long, help: ArgumentHelp("Token auth: the key's 10-character id.", valueName: "id"))
    var keyId: String?

    @Option(name: .long, help: ArgumentHelp("Token auth: the team the key belongs to.", valueName: "id"))
    var teamId: String?

    /// The three, when all are given.
    var key: (file: String, id: String, team: String)? {
        guard let keyFile, let keyId, let teamId else { return nil }
        return (keyFile, keyId, teamId)
    }

    /// Whether any of the three is given.
    var isGiven: Bool { keyFile != nil || keyId != nil || teamId != nil }

    func validate() throws {
        if isGiven && key == nil {
            throw ValidationError("Token auth needs --key-file, --key-id and --team-id together.")
        }
    }
}
