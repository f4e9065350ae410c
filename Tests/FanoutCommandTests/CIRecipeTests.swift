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

    /// The commands each recipe must run, whole: the tools, the cost gate, `fanout ab` of 5 pairs
    /// and the gate writing JUnit XML.
    static let gates = [
        "docs/ci/github-actions.yml": [
            "apt-get update && apt-get install -y valgrind libjemalloc-dev git",
            "scripts/cost.sh",
            "candidate/.build/release/fanout ab baseline/.build/release/fanout candidate/.build/release/fanout "
                + "--repeat 5 --min-effect 5% --output ab -- run --count 300000",
            "candidate/.build/release/fanout gate outcome --thresholds candidate/results/baselines/default/thresholds.txt "
                + "--junit gate.xml",
        ],
        "docs/ci/gitlab-ci.yml": [
            "apt-get update && apt-get install -y valgrind libjemalloc-dev git",
            "scripts/cost.sh",
            ".build/release/fanout ab ../baseline/.build/release/fanout .build/release/fanout "
                + "--repeat 5 --min-effect 5% --output results/ab -- run --count 300000",
            ".build/release/fanout gate results/outcome --thresholds results/baselines/default/thresholds.txt "
                + "--junit results/gate.xml",
        ],
    ]

    /// The shell commands a recipe runs, each on one line: GitHub's `run` steps and GitLab's
    /// `before_script` and `script` entries, read as YAML, comments left out, continued lines
    /// joined, runs of spaces one.
    static func commands(in path: String) throws -> [String] {
        let script = """
            import json, re, sys, yaml
            recipe = yaml.safe_load(open(sys.argv[1]))
            texts = []
            for job in recipe.get("jobs", {}).values():
                texts += [step["run"] for step in job.get("steps", []) if "run" in step]
            for name, job in recipe.items():
                if isinstance(job, dict):
                    texts += job.get("before_script", []) + job.get("script", [])
            commands = []
            for text in texts:
                for line in text.replace(chr(92) + chr(10), " ").split(chr(10)):
                    line = re.sub(" +", " ", line).strip()
                    if line and not line.startswith("#"):
                        commands.append(line)
            print(json.dumps(commands))
            """
        let result = try PeerProcess.run("python3", ["-c", script, path])
        #expect(result.status == 0, "\(result.errors)")
        return try JSONDecoder().decode([String].self, from: Data(result.output.utf8))
    }

    @Test(.requires(.yaml), arguments: recipes)
    func theRecipePassesItsPlatformsSchemaAndRunsEveryGate(recipe: String, schema: String) throws {
        let path = "\(repositoryRoot)/\(recipe)"
        let checked = try PeerProcess.run("check-jsonschema", ["--builtin-schema", schema, path])
        #expect(checked.status == 0, "\(checked.output)\(checked.errors)")
        let commands = try Self.commands(in: path)
        for gate in Self.gates[recipe] ?? [] {
            #expect(commands.contains(gate), "\(gate) not among \(commands)")
        }
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
