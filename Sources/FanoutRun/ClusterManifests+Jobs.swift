import FanoutNotation
import Foundation

// MARK: The shards' Job and the merge's Job, with the scripts their pods run

extension ClusterManifests {
    /// The shell line of a word: single-quoted, a quote inside as '\''.
    static func shellQuoted(_ word: String) -> String {
        "'" + word.replacing("'", with: "'\\''") + "'"
    }

    /// What each shard's pod runs: `fanout send` with its shard, beating a file while it runs
    /// so the merge can tell a running shard from a lost one, and leaving its exit status. The
    /// shell is the pod's first process: it hands SIGTERM (the Job failed, a pod deleted) to
    /// `fanout send`, which writes its folder marked interrupted, and waits for it.
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
            --output \(folder)/shard-$i --metrics 0.0.0.0:\(Self.metricsPort) &
            pid=$!
            trap 'kill -TERM $pid 2>/dev/null' TERM INT
            status=0
            while kill -0 $pid 2>/dev/null; do wait $pid; status=$?; done
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

    func shardJob(options: [String], hasKeys: Bool) -> YAMLNode {
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
                    // But a shard its --abort-on stopped (exit status 6) fails the Job, which
                    // ends the other shards' pods (SIGTERM: each writes its folder marked
                    // interrupted); the merge keeps the abort and names the shard.
                    (
                        "podFailurePolicy",
                        .mapping([
                            (
                                "rules",
                                .sequence([
                                    .mapping([
                                        ("action", "FailJob"),
                                        (
                                            "onExitCodes",
                                            .mapping([
                                                ("containerName", "fanout"), ("operator", "In"),
                                                ("values", .sequence([.integer(Int(RunStatus.aborted.rawValue))])),
                                            ])
                                        ),
                                    ])
                                ])
                            )
                        ])
                    ),
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

    func mergeJob() -> YAMLNode {
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
}
