import FanoutSettings
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
                throw JobError("--thresholds \(thresholds): \(error.reason)")
            }
        } else {
            files.append(("thresholds", "failed == 0\n"))
        }
        let size = files.map(\.1.utf8.count).reduce(0, +) + keys.map(\.1.count).reduce(0, +)
        guard size < 1_000_000 else {
            throw JobError("the files the options name hold \(size) bytes; a ConfigMap or Secret holds under 1 MiB")
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
        return header + documents.map { "---\n" + $0.text }.joined()
    }

    private func check() throws(JobError) {
        guard (1...10_000).contains(shards) else { throw JobError("--shards is from 1 to 10000, not \(shards)") }
        // Pod names are NAME-shards-INDEX-xxxxx and NAME-merge-xxxxx: 63 characters at most.
        guard name.wholeMatch(of: /[a-z0-9]([-a-z0-9]*[a-z0-9])?/) != nil, name.count <= 40 else {
            throw JobError(
                "--name \(name): lowercase letters, digits and '-', starting and ending with a letter or digit, at most 40"
            )
        }
        guard namespace.wholeMatch(of: /[a-z0-9]([-a-z0-9]*[a-z0-9])?/) != nil, namespace.count <= 63 else {
            throw JobError("--namespace \(namespace) is not a Kubernetes namespace name")
        }
        guard resultsClaim.wholeMatch(of: /[a-z0-9]([-.a-z0-9]*[a-z0-9])?/) != nil else {
            throw JobError("--results-claim \(resultsClaim) is not a Kubernetes object name")
        }
        guard !image.isEmpty, !image.contains(where: \.isWhitespace) else {
            throw JobError("--image \(image) is not an image reference")
        }
        for option in sendOptions {
            let name = String(option.split(separator: "=", maxSplits: 1).first ?? "")
            if Self.reserved.contains(name) {
                throw JobError("\(name) is set for each shard by the manifests: leave it out of the send options")
            }
        }
        if !withSink && !Self.namesEndpoint(sendOptions) {
            throw JobError(
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
                guard index + 1 < sendOptions.count else { throw JobError("\(option) needs a file") }
                value = sendOptions[index + 1]
                index += 1
            }
            index += 1
            let key = String(option.dropFirst(2))
            let path = value!
            guard let data = FileManager.default.contents(atPath: path) else {
                throw JobError("\(option) \(path): cannot read it (the manifests carry its contents)")
            }
            if Self.secret.contains(option) {
                keys.append((key, data))
                options += [option, "/etc/fanout/keys/\(key)"]
            } else {
                guard let text = String(data: data, encoding: .utf8) else {
                    throw JobError("\(option) \(path): not UTF-8 text")
                }
                files.append((key, text))
                options += [option, "/etc/fanout/files/\(key)"]
            }
        }
        return (options, files, keys)
    }

    // MARK: Objects

    private func metadata(_ objectName: String, component: String) -> YAMLNode {
        .mapping([("name", .string(objectName)), ("namespace", .string(namespace)), ("labels", labels(component))])
    }

    private func labels(_ component: String) -> YAMLNode {
        .mapping([
            ("app.kubernetes.io/name", "fanout"),
            ("app.kubernetes.io/instance", .string(name)),
            ("app.kubernetes.io/component", .string(component)),
        ])
    }

    private func claim(size: String) -> YAMLNode {
        .mapping([
            ("apiVersion", "v1"), ("kind", "PersistentVolumeClaim"),
            ("metadata", .mapping([("name", .string(resultsClaim)), ("namespace", .string(namespace))])),
            (
                "spec",
                .mapping([
                    ("accessModes", ["ReadWriteMany"]),
                    ("resources", .mapping([("requests", .mapping([("storage", .string(size))]))])),
                ])
            ),
        ])
    }

    private func configMap(_ files: [(String, String)]) -> YAMLNode {
        .mapping([
            ("apiVersion", "v1"), ("kind", "ConfigMap"), ("metadata", metadata("\(name)-files", component: "files")),
            ("data", .mapping(files.map { ($0.0, .string($0.1)) })),
        ])
    }

    private func secret(_ keys: [(String, Data)]) -> YAMLNode {
        .mapping([
            ("apiVersion", "v1"), ("kind", "Secret"), ("metadata", metadata("\(name)-keys", component: "keys")),
            ("type", "Opaque"),
            ("data", .mapping(keys.map { ($0.0, .string($0.1.base64EncodedString())) })),
        ])
    }

    private var resources: YAMLNode {
        let amounts: YAMLNode = .mapping([("cpu", .string(cpu)), ("memory", .string(memory))])
        return .mapping([("requests", amounts), ("limits", amounts)])
    }

    private var podSecurity: YAMLNode {
        .mapping([
            ("runAsNonRoot", true), ("runAsUser", .integer(Self.user)), ("runAsGroup", .integer(Self.user)),
            ("fsGroup", .integer(Self.user)),
        ])
    }

    private var containerSecurity: YAMLNode {
        .mapping([
            ("allowPrivilegeEscalation", false), ("readOnlyRootFilesystem", true),
            ("capabilities", .mapping([("drop", ["ALL"])])),
        ])
    }

    private func volumes(keys: Bool) -> YAMLNode {
        var list: [YAMLNode] = [
            .mapping([
                ("name", "results"), ("persistentVolumeClaim", .mapping([("claimName", .string(resultsClaim))])),
            ]),
            .mapping([("name", "files"), ("configMap", .mapping([("name", .string("\(name)-files"))]))]),
            .mapping([("name", "tmp"), ("emptyDir", .mapping([]))]),
        ]
        if keys {
            list.append(
                .mapping([
                    ("name", "keys"),
                    ("secret", .mapping([("secretName", .string("\(name)-keys")), ("defaultMode", 0o440)])),
                ])
            )
        }
        return .sequence(list)
    }

    private func mounts(keys: Bool) -> YAMLNode {
        var list: [YAMLNode] = [
            .mapping([("name", "results"), ("mountPath", "/results")]),
            .mapping([("name", "files"), ("mountPath", "/etc/fanout/files"), ("readOnly", true)]),
            .mapping([("name", "tmp"), ("mountPath", "/tmp")]),
        ]
        if keys { list.append(.mapping([("name", "keys"), ("mountPath", "/etc/fanout/keys"), ("readOnly", true)])) }
        return .sequence(list)
    }

    /// The shell line of a word: single-quoted, a quote inside as '\''.
    static func shellQuoted(_ word: String) -> String {
        "'" + word.replacing("'", with: "'\\''") + "'"
    }

    /// What each shard's pod runs: `fanout send` with its shard, beating a file while it runs
    /// so the merge can tell a running shard from a lost one, and leaving its exit status.
    func shardScript(options: [String]) -> String {
        let folder = "/results/\(name)"
        let send = (["fanout", "send"] + options).map(Self.shellQuoted).joined(separator: " ")
        return """
            set -u
            i=$((JOB_COMPLETION_INDEX + 1))
            mkdir -p \(folder)
            (while :; do touch \(folder)/shard-$i.alive; sleep 5; done) &
            beat=$!
            \(send) --shard "$i/\(shards)" --start-at \(TimeNotation.format(startAt)) \
            --output \(folder)/shard-$i --metrics 0.0.0.0:\(Self.metricsPort)
            status=$?
            kill $beat
            echo $status > \(folder)/shard-$i.exit
            exit $status
            """
    }

    /// What the merge's pod runs: wait (at most `mergeWait` from the start) until every shard
    /// has ended — left its exit status, or stopped beating for 30 s, or never began within
    /// `startGrace` — then merge and gate.
    func mergeScript() -> String {
        let folder = "/results/\(name)"
        let start = Int(startAt.timeIntervalSince1970.rounded(.up))
        let deadline = start + Int(mergeWait.components.seconds)
        let grace = start + Int(startGrace.components.seconds)
        return """
            set -u
            dir=\(folder)
            mkdir -p $dir
            while :; do
              now=$(date +%s); running=0; ended=0; i=1
              while [ $i -le \(shards) ]; do
                if [ -f $dir/shard-$i.exit ]; then ended=$((ended + 1))
                elif [ -f $dir/shard-$i.alive ] && [ $((now - $(stat -c %Y $dir/shard-$i.alive))) -lt 30 ]; then running=$((running + 1))
                elif [ ! -f $dir/shard-$i.alive ] && [ $now -lt \(grace) ]; then running=$((running + 1))
                fi
                i=$((i + 1))
              done
              [ $running -eq 0 ] && break
              if [ $now -ge \(deadline) ]; then echo "gave up waiting for $running running shards"; break; fi
              sleep 5
            done
            echo "$ended of \(shards) shards ended; merging"
            fanout merge $(ls -d $dir/shard-*/ 2>/dev/null | sed 's:/$::') --output $dir/merged
            if [ ! -f $dir/merged/summary.json ]; then echo "no shard finished"; exit 2; fi
            fanout gate $dir/merged --thresholds /etc/fanout/files/thresholds --junit $dir/merged/junit.xml
            """
    }

    private func shardJob(options: [String], hasKeys: Bool) -> YAMLNode {
        let container: YAMLNode = .mapping([
            ("name", "fanout"), ("image", .string(image)), ("command", ["/bin/sh", "-c"]),
            ("args", .sequence([.string(shardScript(options: options))])),
            ("ports", .sequence([.mapping([("name", "metrics"), ("containerPort", .integer(Self.metricsPort))])])),
            ("resources", resources), ("securityContext", containerSecurity), ("volumeMounts", mounts(keys: hasKeys)),
        ])
        let pod: YAMLNode = .mapping([
            ("restartPolicy", "Never"),
            ("securityContext", podSecurity),
            (
                "topologySpreadConstraints",
                .sequence([
                    .mapping([
                        ("maxSkew", 1), ("topologyKey", "kubernetes.io/hostname"),
                        ("whenUnsatisfiable", "ScheduleAnyway"),
                        ("labelSelector", .mapping([("matchLabels", labels("shard"))])),
                    ])
                ])
            ),
            ("containers", .sequence([container])),
            ("volumes", volumes(keys: hasKeys)),
        ])
        return .mapping([
            ("apiVersion", "batch/v1"), ("kind", "Job"), ("metadata", metadata("\(name)-shards", component: "shard")),
            (
                "spec",
                .mapping([
                    ("completionMode", "Indexed"), ("completions", .integer(shards)), ("parallelism", .integer(shards)),
                    // A failed shard is never run again (that would send its share twice); the
                    // others go on, and the merge says which is missing.
                    ("backoffLimitPerIndex", 0), ("maxFailedIndexes", .integer(shards)),
                    ("podReplacementPolicy", "Failed"),
                    (
                        "template",
                        .mapping([
                            (
                                "metadata",
                                .mapping([
                                    ("labels", labels("shard")),
                                    (
                                        "annotations",
                                        .mapping([
                                            ("prometheus.io/scrape", "true"),
                                            ("prometheus.io/port", .string(String(Self.metricsPort))),
                                            ("prometheus.io/path", "/metrics"),
                                        ])
                                    ),
                                ])
                            ),
                            ("spec", pod),
                        ])
                    ),
                ])
            ),
        ])
    }

    private func mergeJob() -> YAMLNode {
        let container: YAMLNode = .mapping([
            ("name", "merge"), ("image", .string(image)), ("command", ["/bin/sh", "-c"]),
            ("args", .sequence([.string(mergeScript())])),
            (
                "resources",
                .mapping([
                    ("requests", .mapping([("cpu", "500m"), ("memory", "512Mi")])),
                    ("limits", .mapping([("cpu", "1"), ("memory", "1Gi")])),
                ])
            ),
            ("securityContext", containerSecurity), ("volumeMounts", mounts(keys: false)),
        ])
        return .mapping([
            ("apiVersion", "batch/v1"), ("kind", "Job"), ("metadata", metadata("\(name)-merge", component: "merge")),
            (
                "spec",
                .mapping([
                    ("backoffLimit", 0),
                    ("activeDeadlineSeconds", .integer(Int(mergeWait.components.seconds) + 3600)),
                    (
                        "template",
                        .mapping([
                            ("metadata", .mapping([("labels", labels("merge"))])),
                            (
                                "spec",
                                .mapping([
                                    ("restartPolicy", "Never"), ("securityContext", podSecurity),
                                    ("containers", .sequence([container])), ("volumes", volumes(keys: false)),
                                ])
                            ),
                        ])
                    ),
                ])
            ),
        ])
    }

    private func sinkDeployment() -> YAMLNode {
        let args: [YAMLNode] =
            [
                "sink", "--listen", .string("0.0.0.0:\(Self.sinkPort)"), "--admin",
                .string("0.0.0.0:\(Self.sinkAdminPort)"),
            ] + sinkOptions.map { .string($0) }
        let container: YAMLNode = .mapping([
            ("name", "sink"), ("image", .string(image)), ("args", .sequence(args)),
            (
                "ports",
                .sequence([
                    .mapping([("name", "h2"), ("containerPort", .integer(Self.sinkPort))]),
                    .mapping([("name", "admin"), ("containerPort", .integer(Self.sinkAdminPort))]),
                ])
            ),
            (
                "readinessProbe",
                .mapping([
                    ("httpGet", .mapping([("path", "/stats"), ("port", "admin")])), ("periodSeconds", 2),
                ])
            ),
            ("resources", resources), ("securityContext", containerSecurity),
        ])
        return .mapping([
            ("apiVersion", "apps/v1"), ("kind", "Deployment"),
            ("metadata", metadata("\(name)-sink", component: "sink")),
            (
                "spec",
                .mapping([
                    ("replicas", 1), ("selector", .mapping([("matchLabels", labels("sink"))])),
                    (
                        "template",
                        .mapping([
                            (
                                "metadata",
                                .mapping([
                                    ("labels", labels("sink")),
                                    (
                                        "annotations",
                                        .mapping([
                                            ("prometheus.io/scrape", "true"),
                                            ("prometheus.io/port", .string(String(Self.sinkAdminPort))),
                                            ("prometheus.io/path", "/metrics"),
                                        ])
                                    ),
                                ])
                            ),
                            (
                                "spec",
                                .mapping([("securityContext", podSecurity), ("containers", .sequence([container]))])
                            ),
                        ])
                    ),
                ])
            ),
        ])
    }

    private func sinkService() -> YAMLNode {
        .mapping([
            ("apiVersion", "v1"), ("kind", "Service"), ("metadata", metadata("\(name)-sink", component: "sink")),
            (
                "spec",
                .mapping([
                    ("selector", labels("sink")),
                    (
                        "ports",
                        .sequence([
                            .mapping([("name", "h2"), ("port", .integer(Self.sinkPort)), ("targetPort", "h2")]),
                            .mapping([
                                ("name", "admin"), ("port", .integer(Self.sinkAdminPort)), ("targetPort", "admin"),
                            ]),
                        ])
                    ),
                ])
            ),
        ])
    }
}
