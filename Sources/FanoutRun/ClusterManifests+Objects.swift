import Foundation

// MARK: What every object is made of: metadata, labels, the claim, files and keys, resources,
// security, volumes

extension ClusterManifests {
    func metadata(_ objectName: String, component: String) -> YAMLNode {
        .mapping([("name", .string(objectName)), ("namespace", .string(namespace)), ("labels", labels(component))])
    }

    func labels(_ component: String) -> YAMLNode {
        .mapping([
            ("app.kubernetes.io/name", "fanout"),
            ("app.kubernetes.io/instance", .string(name)),
            ("app.kubernetes.io/component", .string(component)),
        ])
    }

    func claim(size: String) -> YAMLNode {
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

    func configMap(_ files: [(String, String)]) -> YAMLNode {
        .mapping([
            ("apiVersion", "v1"), ("kind", "ConfigMap"), ("metadata", metadata("\(name)-files", component: "files")),
            ("data", .mapping(files.map { ($0.0, .string($0.1)) })),
        ])
    }

    func secret(_ keys: [(String, Data)]) -> YAMLNode {
        .mapping([
            ("apiVersion", "v1"), ("kind", "Secret"), ("metadata", metadata("\(name)-keys", component: "keys")),
            ("type", "Opaque"),
            ("data", .mapping(keys.map { ($0.0, .string($0.1.base64EncodedString())) })),
        ])
    }

    var resources: YAMLNode {
        let amounts: YAMLNode = .mapping([("cpu", .string(cpu)), ("memory", .string(memory))])
        return .mapping([("requests", amounts), ("limits", amounts)])
    }

    var podSecurity: YAMLNode {
        .mapping([
            ("runAsNonRoot", true), ("runAsUser", .integer(Self.user)), ("runAsGroup", .integer(Self.user)),
            ("fsGroup", .integer(Self.user)),
        ])
    }

    var containerSecurity: YAMLNode {
        .mapping([
            ("allowPrivilegeEscalation", false), ("readOnlyRootFilesystem", true),
            ("capabilities", .mapping([("drop", ["ALL"])])),
        ])
    }

    func volumes(keys: Bool) -> YAMLNode {
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

    func mounts(keys: Bool) -> YAMLNode {
        var list: [YAMLNode] = [
            .mapping([("name", "results"), ("mountPath", "/results")]),
            .mapping([("name", "files"), ("mountPath", "/etc/fanout/files"), ("readOnly", true)]),
            .mapping([("name", "tmp"), ("mountPath", "/tmp")]),
        ]
        if keys { list.append(.mapping([("name", "keys"), ("mountPath", "/etc/fanout/keys"), ("readOnly", true)])) }
        return .sequence(list)
    }
}
