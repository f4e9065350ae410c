"""Reads `fanout cluster render`'s YAML with PyYAML and prints, as JSON, the fields the tests
check: the objects' kinds in order, the shard Job's spec, what its first and last pods run
(the pod script run by a real shell with JOB_COMPLETION_INDEX set, `fanout` replaced by a
function that prints its arguments), the merge Job, the ConfigMap's files and the Secret's keys.

    python3 check_manifests.py MANIFESTS.yaml
"""
import json
import subprocess
import sys

import yaml

documents = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
found = {"kinds": [d["kind"] for d in documents]}


def pod_words(script, index):
    """The words `fanout` gets in pod `index`, run through sh with `fanout` a printing function."""
    prelude = 'fanout() { printf "%s\\n" "$@" > "$OUT"; }\nmkdir() { :; }\ntouch() { :; }\nsleep() { exit 0; }\n'
    body = script.replace("exit $status", "exit 0").replace("echo $status >", "true >")
    out = subprocess.run(["mktemp"], capture_output=True, text=True).stdout.strip()
    env = {"JOB_COMPLETION_INDEX": str(index), "OUT": out, "PATH": "/usr/bin:/bin"}
    subprocess.run(["sh", "-c", prelude + body], env=env, check=True, timeout=30)
    return ["fanout"] + open(out).read().splitlines()


for d in documents:
    kind, name = d["kind"], d["metadata"]["name"]
    if kind == "ConfigMap":
        found["files"] = d["data"]
    elif kind == "Secret":
        found["secret"] = sorted(d["data"])
    elif kind == "Deployment":
        found["sinkArgs"] = d["spec"]["template"]["spec"]["containers"][0]["args"]
    elif kind == "Job" and name.endswith("-shards"):
        spec = d["spec"]
        pod = spec["template"]["spec"]
        container = pod["containers"][0]
        annotations = spec["template"]["metadata"]["annotations"]
        script = container["args"][0]
        found["shards"] = {
            "completionMode": spec["completionMode"],
            "completions": spec["completions"],
            "parallelism": spec["parallelism"],
            "backoffLimitPerIndex": spec["backoffLimitPerIndex"],
            "podReplacementPolicy": spec["podReplacementPolicy"],
            "failJobOnExitCodes": [
                code
                for rule in spec.get("podFailurePolicy", {}).get("rules", [])
                if rule["action"] == "FailJob" and rule["onExitCodes"]["operator"] == "In"
                for code in rule["onExitCodes"]["values"]
            ],
            "restartPolicy": pod["restartPolicy"],
            "spreadKey": pod["topologySpreadConstraints"][0]["topologyKey"],
            "resources": container["resources"]["limits"]
            if container["resources"]["limits"] == container["resources"]["requests"] else None,
            "scrape": {k.split("/")[1]: v for k, v in annotations.items() if k.startswith("prometheus.io/")},
            "claim": next(v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v),
            "firstPod": pod_words(script, 0),
            "lastPod": pod_words(script, spec["completions"] - 1),
        }
    elif kind == "Job" and name.endswith("-merge"):
        found["merge"] = {
            "backoffLimit": d["spec"]["backoffLimit"],
            "script": d["spec"]["template"]["spec"]["containers"][0]["args"][0],
        }
json.dump(found, sys.stdout)
