import Testing

@testable import FanoutRun

/// A refused `--output` names whose results it holds: a plan folder was called "an earlier
/// run's results" (newcomer pass 4).
@Suite struct RunOutputWordsTests {
    @Test(arguments: [
        (["plan.json"], "plan's"),
        (["plan.json", "verify/"], "plan's"),
        (["fleet-plan.json"], "plan's"),
        (["report.html", "search.json", "step-01/"], "search's"),
        (["step-02/"], "search's"),
        (["report.html"], "run's"),
        (["summary.json", "summary.md"], "run's"),
        (["plan.json", "summary.json"], "run's"),
        (["repeat-1/"], "run's"),
    ])
    func theRefusalSaysWhoseResultsTheFolderHolds(earlier: [String], whose: String) {
        #expect(RunOutput.whose(earlier) == whose)
    }
}
