// MARK: The sink in the cluster (--with-sink): a Deployment and its Service

extension ClusterManifests {
    func sinkDeployment() -> YAMLNode {
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

    func sinkService() -> YAMLNode {
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
