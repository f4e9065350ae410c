import FanoutTestSupport
import Foundation
import Testing

/// docs/ci: the CI recipes users copy. Each must pass its platform's schema (PyPI's
/// check-jsonschema and the GitHub-workflow and GitLab-CI schemas it vendors) and run the three
/// gates the README promises.
@Suite(.requires(.checkJSONSchema)) struct CIRecipeTests {
    static let recipes = [
        ("docs/ci/github-actions.yml", "vendor.github-workflows"),
        ("docs/ci/gitlab-ci.yml", "vendor.gitlab-ci"),
    ]

    @Test(arguments: recipes)
    func theRecipePassesItsPlatformsSchemaAndRunsEveryGate(recipe: String, schema: String) throws {
        let path = "\(repositoryRoot)/\(recipe)"
        let checked = try PeerProcess.run("check-jsonschema", ["--builtin-schema", schema, path])
        #expect(checked.status == 0, "\(checked.output)\(checked.errors)")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text.contains("scripts/cost.sh"))
        #expect(text.contains("fanout ab") && text.contains("--repeat 5"))
        #expect(text.contains("--junit"))
        #expect(text.contains("apt-get install -y valgrind"))
    }

    /// The validator is not a rubber stamp: a recipe with a step the platform does not know fails.
    @Test(arguments: recipes)
    func aBrokenRecipeFailsTheSameCheck(recipe: String, schema: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fanout-ci-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        var text = try String(contentsOfFile: "\(repositoryRoot)/\(recipe)", encoding: .utf8)
        // GitHub: a job without `runs-on`; GitLab: a job with `scripts` for `script`.
        text =
            recipe.hasSuffix("github-actions.yml")
            ? text.replacingOccurrences(of: "runs-on: ubuntu-24.04", with: "runs_on: ubuntu-24.04")
            : text.replacingOccurrences(of: "\n  script:", with: "\n  scripts:")
        let broken = folder.appendingPathComponent((recipe as NSString).lastPathComponent).path
        try text.write(toFile: broken, atomically: true, encoding: .utf8)
        let checked = try PeerProcess.run("check-jsonschema", ["--builtin-schema", schema, broken])
        #expect(checked.status == 1, "\(checked.output)\(checked.errors)")
    }
}
