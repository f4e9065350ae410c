import FanoutFiles
import FanoutNotation
import Foundation

/// `fanout cluster render`: a sharded run as Kubernetes objects, one `kubectl apply -f -` away.
///
/// ```
///  ConfigMap NAME-files      the template, header scenario and thresholds (/etc/fanout/files)
///  Secret NAME-keys          the .p8 key, client certificate and CA (/etc/fanout/keys), if given
///  Job NAME-shards           Indexed, N pods at once: pod k runs
///                              fanout send … --shard (k+1)/N --start-at T
///                                --output /results/NAME/shard-(k+1) --metrics 0.0.0.0:9464
///                            never re-run (backoffLimitPerIndex 0: a re-run doubles load),
///                            spread over nodes; beats /results/NAME/shard-i.alive while it runs
///                            and leaves shard-i.exit (its status) when done
///  Job NAME-merge            waits until no shard is still running (bounded), then
///                              fanout merge /results/NAME/shard-* --output /results/NAME/merged
///                              fanout gate /results/NAME/merged --thresholds …
///                            its exit status is the run's verdict
///  Deployment, Service       NAME-sink: `fanout sink` in the cluster (--with-sink)
///  PersistentVolumeClaim     the results claim, ReadWriteMany (--claim-size)
/// ```
///
/// Every pod runs as the image's non-root user (10001) and writes only to the results claim.
public struct ClusterManifests: Sendable {
    /// How many shards (pods) the run has.
    public var shards: Int
    public var image: String
    /// The run's name: objects are named after it, its results go to `/results/NAME`.
    public var name = "fanout"
    public var namespace = "default"
    /// A ReadWriteMany claim the pods share, mounted at `/results`.
    public var resultsClaim = "fanout-results"
    /// When given, the claim is rendered too, of this size (`10Gi`).
    public var claimSize: String?
    /// When every shard sends its first request.
    public var startAt: Date
    /// The gate's thresholds file (its lines go in the ConfigMap); `failed == 0` without one.
    public var thresholds: String?
    /// Each shard's CPU and memory, requested and limited alike (Guaranteed QoS).
    public var cpu = "2"
    public var memory = "1Gi"
    /// Also run `fanout sink` in the cluster, and send to it unless `--endpoint` is given.
    public var withSink = false
    /// `fanout sink`'s options when `withSink`.
    public var sinkOptions: [String] = []
    /// `fanout send`'s options, as given after `--`.
    public var sendOptions: [String]
    /// The longest the merge waits for the shards, from the start.
    public var mergeWait = Self.defaultMergeWait
    public static let defaultMergeWait: Duration = .seconds(3600)
    /// How long after rendering the shards start, without a time given.
    public static let defaultStartIn: Duration = .seconds(60)
    /// A shard whose pod has not begun to beat this long after the start is taken as lost.
    public var startGrace: Duration = .seconds(120)

    public static let metricsPort = 9464
    public static let sinkPort = 2197
    public static let sinkAdminPort = 9090
    /// The image's user (Dockerfile).
    static let user = 10001

    public init(shards: Int, image: String, startAt: Date, sendOptions: [String]) {
        self.shards = shards
        self.image = image
        self.startAt = startAt
        self.sendOptions = sendOptions
    }

    /// Options the manifests set for each shard, which the send options must not.
    static let reserved = ["--shard", "--start-at", "--output", "--metrics", "--repeat"]
    /// Options naming a file the pods read from the ConfigMap, and those from the Secret.
    static let configured = ["--template", "--scenario"]
    static let secret = ["--key-file", "--cert", "--cert-key", "--ca-file"]

    /// Whether `fanout send` options give `--endpoint` (as `--endpoint URL` or `--endpoint=URL`).
    public static func namesEndpoint(_ options: [String]) -> Bool {
        options.contains { $0 == "--endpoint" || $0.hasPrefix("--endpoint=") }
    }

    /// The `--endpoint` of `options` when its host is a loopback address (127.0.0.0/8,
    /// localhost, ::1): in a pod that is the pod itself, rarely what a rendered Job means.
    public static func loopbackEndpoint(in options: [String]) -> String? {
        var endpoint: String?
        for (index, option) in options.enumerated() {
            if option == "--endpoint", index + 1 < options.count { endpoint = options[index + 1] }
            if option.hasPrefix("--endpoint=") { endpoint = String(option.dropFirst("--endpoint=".count)) }
        }
        guard let endpoint, let host = URLComponents(string: endpoint)?.host else { return nil }
        let loopback = host == "localhost" || host.hasPrefix("127.") || host == "::1" || host == "[::1]"
        return loopback ? endpoint : nil
    }

    /// The multi-document YAML. Files the options name are read now, so a missing one is said
    /// here rather than in a thousand pods.
    public func render() throws(JobError) -> String {
        try check()
        var (options, files, keys) = try mountedOptions()
        if withSink && !Self.namesEndpoint(options) {
            options += ["--endpoint", "http://\(name)-sink.\(namespace).svc:\(Self.sinkPort)"]
        }
        if let thresholds {
            do {
                files.append(("thresholds", try String(contentsOfFile: thresholds, encoding: .utf8)))
            } catch {
                throw JobError.cannotRead(.optionValue("--thresholds", thresholds), error.reason)
            }
        } else {
            files.append(("thresholds", "failed == 0\n"))
        }
        let size = files.map(\.1.utf8.count).reduce(0, +) + keys.map(\.1.count).reduce(0, +)
        guard size < 1_000_000 else {
            throw JobError.option(
                .command,
                "the files the options name hold \(size) bytes; a ConfigMap or Secret holds under 1 MiB"
            )
        }
        var documents: [YAMLNode] = []
        if let claimSize { documents.append(claim(size: claimSize)) }
        documents.append(configMap(files))
        if !keys.isEmpty { documents.append(secret(keys)) }
        if withSink { documents += [sinkDeployment(), sinkService()] }
        documents.append(shardJob(options: options, hasKeys: !keys.isEmpty))
        documents.append(mergeJob())
        let header = """
            # fanout cluster render: \(shards) shards of `fanout send`, starting at \
            \(TimeNotation.format(startAt)); apply with `kubectl apply -f -`.
            # Results: /results/\(name)/ on the claim \(resultsClaim); the Job \(name)-merge's exit status is the verdict.

            """
        return try header + documents.map { document throws(JobError) in try "---\n" + document.text() }.joined()
    }

    private func check() throws(JobError) {
        guard (1...10_000).contains(shards) else {
            throw JobError.option(.option("--shards"), "from 1 to 10000, not \(shards)")
        }
        // Pod names are NAME-shards-INDEX-xxxxx and NAME-merge-xxxxx: 63 characters at most.
        guard name.wholeMatch(of: /[a-z0-9]([-a-z0-9]*[a-z0-9])?/) != nil, name.count <= 40 else {
            throw JobError.option(
                .optionValue("--name", name),
                "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 40"
            )
        }
        guard namespace.wholeMatch(of: /[a-z0-9]([-a-z0-9]*[a-z0-9])?/) != nil, namespace.count <= 63 else {
            throw JobError.option(.optionValue("--namespace", namespace), "not a Kubernetes namespace name")
        }
        guard resultsClaim.wholeMatch(of: /[a-z0-9]([-.a-z0-9]*[a-z0-9])?/) != nil else {
            throw JobError.option(.optionValue("--results-claim", resultsClaim), "not a Kubernetes object name")
        }
        guard !image.isEmpty, !image.contains(where: \.isWhitespace) else {
            throw JobError.option(.optionValue("--image", image), "not an image reference")
        }
        for option in sendOptions {
            let name = String(option.split(separator: "=", maxSplits: 1).first ?? "")
            if Self.reserved.contains(name) {
                throw JobError.option(
                    .option(name),
                    "set for each shard by the manifests: leave it out of the send options"
                )
            }
        }
        if !withSink && !Self.namesEndpoint(sendOptions) {
            throw JobError.option(
                .command,
                "the send options need --endpoint URL (or render --with-sink to send to a sink in the cluster)"
            )
        }
    }

    /// The send options with the files they name moved to the ConfigMap and Secret mounts.
    private func mountedOptions() throws(JobError) -> (
        options: [String], files: [(String, String)], keys: [(String, Data)]
    ) {
        var options: [String] = []
        var files: [(String, String)] = []
        var keys: [(String, Data)] = []
        var index = 0
        while index < sendOptions.count {
            var option = sendOptions[index]
            var value: String?
            if let equals = option.firstIndex(of: "="), option.hasPrefix("--") {
                value = String(option[option.index(after: equals)...])
                option = String(option[..<equals])
            }
            let isFile = Self.configured.contains(option) || Self.secret.contains(option)
            guard isFile else {
                options.append(sendOptions[index])
                index += 1
                continue
            }
            if value == nil {
                guard index + 1 < sendOptions.count else { throw JobError.option(.option(option), "it needs a file") }
                value = sendOptions[index + 1]
                index += 1
            }
            index += 1
            let key = String(option.dropFirst(2))
            let path = value!
            guard let data = FileManager.default.contents(atPath: path) else {
                throw JobError.cannotRead(
                    .optionValue(option, path),
                    "the manifests carry its contents, so it must be readable here"
                )
            }
            if Self.secret.contains(option) {
                keys.append((key, data))
                options += [option, "/etc/fanout/keys/\(key)"]
            } else {
                guard let text = String(data: data, encoding: .utf8) else {
                    throw JobError.input(.optionValue(option, path), "not UTF-8 text")
                }
                files.append((key, text))
                options += [option, "/etc/fanout/files/\(key)"]
            }
        }
        return (options, files, keys)
    }
}
